/**
 * Real files in a fresh temporary directory, removed afterwards by the helper itself: after the
 * test when made in a test or a beforeEach, else (beforeAll, describe) after the file's tests and
 * its own afterAll hooks, so whatever still uses the directory has been closed by then.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, onTestFinished } from "vitest";

export interface TempDir {
  /** Absolute, symlinks resolved (macOS's /var -> /private/var would otherwise differ). */
  path: string;
  file(name: string): string;
  /** Writes `content` at `name` (creating directories); returns the absolute path. */
  write(name: string, content: string | Uint8Array): Promise<string>;
  link(name: string, target: string): Promise<string>;
  mkdir(name: string): Promise<string>;
  /** Removes it now (it is removed afterwards anyway). */
  remove(): Promise<void>;
}

/** Directories made outside a test: this file's hook is registered first, so it runs after the test file's own. */
const untilFileEnd = new Set<() => Promise<void>>();
afterAll(async () => {
  for (const remove of untilFileEnd) await remove();
  untilFileEnd.clear();
});

export async function tempDir(prefix = "flagserve-test-"): Promise<TempDir> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const remove = () => rm(path, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    untilFileEnd.add(remove); // not inside a test (onTestFinished says so by throwing)
  }
  const file = (name: string) => join(path, name);
  return {
    path,
    file,
    async write(name, content) {
      await mkdir(dirname(file(name)), { recursive: true });
      await writeFile(file(name), content);
      return file(name);
    },
    async link(name, target) {
      await mkdir(dirname(file(name)), { recursive: true });
      await symlink(target, file(name));
      return file(name);
    },
    async mkdir(name) {
      await mkdir(file(name), { recursive: true });
      return file(name);
    },
    remove,
  };
}
