/**
 * Whether a file flagserve writes (the `--overrides` file, `manifest -o`) would be read back as
 * flags: it is, or lies inside, a served source. Compared by real paths, so a path through a
 * symlink to a source's directory, or a source given through one, is caught too.
 */
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";

/** The real path of `path`; when it does not exist yet (a file about to be written), its directory's real path and then its name. */
export async function realPathOf(path: string): Promise<string> {
  const full = resolve(path);
  try {
    return await realpath(full);
  } catch {
    return resolve(await realpath(dirname(full)).catch(() => dirname(full)), relative(dirname(full), full));
  }
}

export interface HoldingSource {
  /** The source as given. */
  source: string;
  /** The file is the source itself (a file source), not a file inside it. */
  itself: boolean;
}

/** The first of `sourcePaths` (directories or files, as given) that is `file` or holds it; undefined when none does. */
export async function sourceHolding(file: string, sourcePaths: readonly string[]): Promise<HoldingSource | undefined> {
  const target = await realPathOf(file);
  for (const source of sourcePaths) {
    const rel = relative(await realPathOf(source), target);
    if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) return { source, itself: rel === "" };
  }
  return undefined;
}
