/**
 * A configuration SOURCE as it was at a git revision, read from the repository without a
 * checkout (`git ls-tree`, `git show REV:path`) and laid out as the file source lays out the
 * working tree (sources/discover.ts): the same environments, the same files merged.
 */
import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { isConfigFileName, stemOf } from "../sources/discover.js";
import { MAX_FILE_BYTES } from "../sources/files.js";
import type { SourceDocument, SourceEnvironment, SourceLoad, SourceProblem } from "../sources/source.js";

const run = promisify(execFile);

/** The revision is not one, or the path is not in a git repository: a usage error. */
export class GitError extends Error {}

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run("git", args, { cwd, maxBuffer: MAX_FILE_BYTES + 1024, encoding: "utf8" });
    return stdout;
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT") throw new GitError("git is not installed (or not on PATH)");
    throw new GitError((e.stderr ?? e.message).trim().split("\n")[0] ?? "git failed");
  }
}

interface TreeEntry {
  type: "blob" | "tree" | "commit";
  mode: string;
  name: string;
}

/** `git ls-tree REV:dir`, one level. */
async function listTree(top: string, rev: string, dir: string): Promise<TreeEntry[]> {
  const text = await git(top, ["ls-tree", "-z", `${rev}:${dir}`]);
  return text
    .split("\0")
    .filter((line) => line !== "")
    .map((line) => {
      const [meta, name] = line.split("\t") as [string, string];
      const [mode, type] = meta.split(" ") as [string, TreeEntry["type"]];
      return { mode, type, name };
    });
}

/** What is at `path` in REV: "tree", "blob", or undefined when nothing is. */
async function objectType(top: string, rev: string, path: string): Promise<string | undefined> {
  try {
    return (await git(top, ["cat-file", "-t", `${rev}:${path}`])).trim();
  } catch {
    return undefined;
  }
}

/** The repository holding `path` (the path need not exist now) and `path` relative to its top. */
export async function repositoryOf(path: string): Promise<{ top: string; rel: string }> {
  const abs = resolve(path);
  let dir = abs;
  // The nearest existing directory: a source deleted in the working tree may still be at REV.
  while (
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    if (dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  const top = (
    await git(dir, ["rev-parse", "--show-toplevel"]).catch(() => {
      throw new GitError(`${path} is not in a git repository`);
    })
  ).trim();
  const rel = relative(top, abs).split(sep).join("/");
  return { top, rel };
}

/** The full commit REV names; GitError when it names none. */
export async function resolveRevision(cwd: string, rev: string): Promise<string> {
  if (rev.startsWith("-")) throw new GitError(`'${rev}' is not a git revision`);
  try {
    return (await git(cwd, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`])).trim();
  } catch {
    throw new GitError(`unknown git revision '${rev}'`);
  }
}

/**
 * SOURCE (a directory or file of the working tree) as it was at REV, as the file source would
 * read it. Files are named `REV:path` in problems. A path absent at REV has no environments.
 */
export async function readAtRevision(rev: string, spec: string): Promise<SourceLoad> {
  const { top, rel } = await repositoryOf(spec);
  const commit = await resolveRevision(top, rev);
  const id = `${rev}:${rel}`;
  const show = async (path: string): Promise<SourceDocument> => {
    const file = `${rev}:${path}`;
    try {
      return { file, text: await git(top, ["show", `${commit}:${path}`]) };
    } catch (error) {
      return { file, error: `cannot read at ${rev}: ${(error as Error).message}` };
    }
  };
  const type = await objectType(top, commit, rel);
  if (type === "blob") return { id, documents: [{ stem: stemOf(rel), document: await show(rel) }], environments: [], problems: [] };
  if (type !== "tree") return { id, documents: [], environments: [], problems: [] };

  const prefix = rel === "" ? "" : `${rel}/`;
  const environments: SourceEnvironment[] = [];
  const problems: SourceProblem[] = [];
  for (const entry of await listTree(top, commit, rel)) {
    if (entry.name.startsWith(".")) continue;
    if (entry.mode === SYMLINK && isConfigFileName(entry.name)) {
      // Its blob is the link's target path, not the file: not followed in a revision.
      problems.push({
        env: stemOf(entry.name),
        file: `${rev}:${prefix}${entry.name}`,
        message: "a symbolic link: not followed when reading a git revision",
      });
      continue;
    }
    if (entry.type === "blob" && isConfigFileName(entry.name)) {
      environments.push({ name: stemOf(entry.name), documents: [await show(prefix + entry.name)] });
    } else if (entry.type === "tree") {
      const dir = prefix + entry.name;
      const files = (await listTree(top, commit, dir)).filter(
        (e) => e.type === "blob" && e.mode !== SYMLINK && !e.name.startsWith(".") && isConfigFileName(e.name),
      );
      const documents = await Promise.all(files.map((f) => show(`${dir}/${f.name}`)));
      environments.push({ name: entry.name, documents, dir: `${rev}:${dir}` });
    }
  }
  return { id, documents: [], environments, problems };
}

const SYMLINK = "120000";
