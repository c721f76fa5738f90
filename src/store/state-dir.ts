/**
 * Where flagserve keeps state (generated API keys, rotation records, the admin token and the URL
 * of the server that wrote it), and the rules every reader and writer of it follows:
 *
 * - One directory per served configuration, private to the user: by default
 *   `$XDG_STATE_HOME/flagserve/<name>-<digest>` (else `~/.local/state/flagserve/...`), the digest
 *   taken over the resolved sources, so two configurations never share keys or a token unless
 *   they are given the same `--state-dir` on purpose.
 * - The directory (and the per-user directory holding the default ones) is created 0700, whatever
 *   the umask, and its files 0600. A directory or file that another user owns, or that other
 *   users may write, is refused (as ssh refuses such keys): it could have been planted, or its
 *   files swapped, and its keys and token would be adopted. Checked on every read (the directory
 *   and the file read) as on every write, by the server and by every command.
 * - Read-modify-write of a state file happens under a lock on the directory, so concurrent
 *   writers (servers started together, `keys rotate` beside a server) never lose each other's keys.
 */
import { createHash } from "node:crypto";
import { constants, realpathSync } from "node:fs";
import { lstat, mkdir, open, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, extname, isAbsolute, join, resolve } from "node:path";
import lockfile from "proper-lockfile";
import { sourceKindOf } from "../sources/source.js";

const realPath = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** `$XDG_STATE_HOME/flagserve`, else `~/.local/state/flagserve` (`%LOCALAPPDATA%\flagserve` on Windows). */
export function userStateDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return join(env.LOCALAPPDATA || join(homedir(), "AppData", "Local"), "flagserve");
  const base = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(base, "flagserve");
}

/** A source as it identifies the configuration: a path's real absolute path, a URL as written. */
function resolvedSource(source: string, cwd: string): string {
  const kind = sourceKindOf(source);
  if (kind === "url") return source;
  if (kind === "inline") return `${source}:${cwd}`;
  return realPath(resolve(cwd, source));
}

/** A readable prefix for the directory name: the first path's name, else the first URL's host. */
function nameOf(sources: readonly string[]): string {
  const path = sources.find((s) => sourceKindOf(s) === "files");
  const url = sources.find((s) => sourceKindOf(s) === "url");
  let name = path !== undefined ? basename(path, extname(path)) : "inline";
  if (path === undefined && url !== undefined) name = new URL(url).hostname;
  return name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 40) || "flags";
}

/**
 * The default state directory of a configuration (its sources: paths, URLs, the inline source's
 * id): a directory of userStateDir named after the configuration and a digest of its resolved
 * sources. The same sources give the same directory from any working directory and through any
 * symlink; any other configuration (a sibling directory, one more source) gets another.
 */
export function defaultStateDir(
  sources: string | readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  const list = typeof sources === "string" ? [sources] : sources;
  const resolved = list.map((s) => resolvedSource(s, cwd));
  const digest = createHash("sha256").update(JSON.stringify(resolved)).digest("hex").slice(0, 12);
  return join(userStateDir(env), `${nameOf(resolved)}-${digest}`);
}

/** A state directory or file that must not be used as it is; the message says why and how to fix it. */
export class StateDirError extends Error {}

interface Owned {
  uid: number;
  mode: number;
  isDirectory(): boolean;
}

const currentUid = (): number | null => process.getuid?.() ?? null;

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, "0")}`;

/**
 * Refuses a state directory or file another user owns or other users may write (the checks ssh
 * makes). `uid` is the current user's (null on Windows, where nothing is checked).
 */
export function checkPrivate(path: string, stats: Owned, uid: number | null = currentUid()): void {
  if (uid === null) return;
  const what = stats.isDirectory() ? "state directory" : "state file";
  if (stats.uid !== uid) {
    throw new StateDirError(
      `refusing ${what} ${path}: it belongs to another user (uid ${stats.uid}, you are ${uid}), so its keys and token could have been planted; remove it, or pass --state-dir with a directory of your own`,
    );
  }
  if ((stats.mode & 0o022) !== 0) {
    const fix = stats.isDirectory() ? `chmod 700 ${path}` : `chmod 600 ${path}`;
    throw new StateDirError(`refusing ${what} ${path}: other users may write it (mode ${octal(stats.mode)}); fix it with: ${fix}`);
  }
}

/** The path and, through a symlink, its target must both pass checkPrivate. */
async function checkPath(path: string, uid: number | null): Promise<boolean> {
  let link;
  try {
    link = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  if (link.isSymbolicLink()) {
    if (uid !== null && link.uid !== uid) checkPrivate(path, { uid: link.uid, mode: 0, isDirectory: () => false }, uid);
    checkPrivate(path, await stat(path), uid);
  } else checkPrivate(path, link, uid);
  return true;
}

/**
 * Checks a state directory: false when there is none; throws StateDirError when it, or the
 * per-user directory holding it (userStateDir, which flagserve made), is refused.
 */
export async function checkStateDir(dir: string, uid: number | null = currentUid()): Promise<boolean> {
  const parent = dirname(resolve(dir));
  if (parent === resolve(userStateDir())) await checkPath(parent, uid);
  return checkPath(dir, uid);
}

/**
 * The text of the state file `name` in `dir`, checked as it is read: the directory and the file
 * (through a symlink, the link and its target) must be the user's and written by no one else.
 * Undefined when there is no such file (or directory); StateDirError when refused.
 */
export async function readStateFile(dir: string, name: string, uid: number | null = currentUid()): Promise<string | undefined> {
  if (!(await checkStateDir(dir, uid))) return undefined;
  const path = join(dir, name);
  if (!(await checkPath(path, uid))) return undefined;
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined; // removed meanwhile
    throw error;
  }
  try {
    // What is read is what was checked: the open file itself, not a file put there meanwhile.
    const opened = await handle.stat();
    if (!opened.isFile()) throw new StateDirError(`refusing state file ${path}: it is not a regular file`);
    checkPrivate(path, opened, uid);
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * The state directory, ready to be written: created (0700, its missing parents too, whatever the
 * umask) when missing, refused (StateDirError) when another user owns it or others may write it.
 */
export async function openStateDir(dir: string, uid: number | null = currentUid()): Promise<string> {
  // mkdir's mode is masked by the umask, which only ever takes bits away: 0700 stays 0700 or less.
  await mkdir(resolve(dir, ".."), { recursive: true, mode: 0o700 });
  await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  await checkStateDir(dir, uid);
  return dir;
}

/**
 * Runs `update` holding the state directory's lock (a `.lock` directory inside it, taken by
 * other processes as well as by this one), so a read-modify-write of its files is never
 * interleaved with another. A lock left by a process that died is taken over after 10 s.
 */
export async function withStateLock<T>(dir: string, update: () => Promise<T>): Promise<T> {
  await openStateDir(dir);
  const release = await lockfile.lock(dir, {
    lockfilePath: join(dir, ".lock"),
    stale: 10_000,
    retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
    realpath: false,
    // Held for one read-modify-write: a lock taken over meanwhile (after a 10 s stall) is no
    // reason to end the process, which proper-lockfile's default would do.
    onCompromised: () => undefined,
  });
  try {
    return await update();
  } finally {
    await release();
  }
}
