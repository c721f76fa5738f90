/**
 * Watches the config PATH and calls back, debounced, with the paths that changed. A spurious call
 * costs a reload; a missed one, latency only: the server re-checks what each reload read
 * (src/changes/reloader.ts), and that check, not this watcher, guarantees convergence. To be fast:
 * - PATH is watched through the directory that holds it (or its nearest existing ancestor), never
 *   through a handle on a file alone: flagd lost its watch when a file was renamed over or deleted
 *   (flagd #42, #1876). Deleting and re-creating a file, or PATH itself, is seen.
 * - No `awaitWriteFinish`: the reader waits for a file to settle (./files.ts), and chokidar's can go
 *   deaf to a file for good (a path whose stability poll meets ENOENT, deleted mid-write, stays in
 *   its pending writes, swallowing every later change). `atomic` (the default) folds delete +
 *   re-create within 100 ms into one change.
 * - Kubernetes ConfigMap volumes swap the `..data` symlink the config files point through, which
 *   chokidar reports only when the old target is then deleted: hence `linkTracker`.
 */
import { watch, type FSWatcher } from "chokidar";
import { lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, relative, resolve, sep } from "node:path";
import { isConfigFileName } from "./discover.js";

export interface ConfigWatcher {
  /** Starts chokidar afresh (after the directory was unreadable, its handles may be dead). */
  restart(): void;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Config PATH: a directory of environment files/subdirectories, or a single file. */
  path: string;
  /** Called (debounced) after anything relevant changed, with the absolute paths involved. */
  onChange: (paths: string[]) => void;
  /** Debounce window in ms (default 1). Short: it only folds one write's events into one call; settling is the reader's. */
  debounceMs?: number;
  /** chokidar errors, and errors thrown by `onChange` (rethrown when there is no `onError`). */
  onError?: (error: Error) => void;
}

/** The config PATH, as watched. */
interface Target {
  /** Absolute. */
  path: string;
  kind: "dir" | "file";
  /** The directory chokidar watches: the nearest existing ancestor of PATH's parent. */
  root: string;
}

/** What a path is to the target; undefined: irrelevant. */
type Role = "root" | "chain" | "self" | "env" | "file" | "unknown";

/** Dot-files (editor locks such as `.#flags.yaml`, Kubernetes' `..data`), backups, swap and temp files, vim's test file `4913`. */
const isJunk = (name: string) => name.startsWith(".") || name.endsWith("~") || name === "4913" || /\.(swp|swo|swx|tmp)$/i.test(name);
/** As discovery reads them: test files (`dev.test.yaml`) are not configuration, so editing one reloads nothing. */
const isConfigFile = (name: string) => !isJunk(name) && isConfigFileName(name);

/** A symlink's type is not known until chokidar follows it. */
const typeOf = (stats: Stats | undefined) => (stats?.isDirectory() ? "dir" : stats?.isFile() ? "file" : undefined);

function existingAncestor(dir: string): string {
  for (;;) {
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return dir;
    const up = dirname(dir);
    if (up === dir) return dir;
    dir = up;
  }
}

/**
 * A directory target admits its config files and each subdirectory's config files (one
 * environment each); a file target admits that file alone. Directories between the watched root
 * and a PATH that does not exist yet ("chain") are admitted so that their creation is seen.
 */
function roleOf(t: Target, p: string, type: "dir" | "file" | undefined): Role | undefined {
  if (p === t.path) return "self";
  if (p === t.root) return "root";
  if (t.path.startsWith(p + sep)) return type === "file" ? undefined : "chain";
  if (t.kind === "file" || !p.startsWith(t.path + sep)) return undefined;
  const parts = p.slice(t.path.length + 1).split(sep);
  const name = parts[parts.length - 1]!;
  if (parts.length === 1) {
    if (type === "dir") return isJunk(name) ? undefined : "env";
    if (type === "file") return isConfigFile(name) ? "file" : undefined;
    return isJunk(name) ? undefined : "unknown";
  }
  if (parts.length === 2 && type !== "dir" && !isJunk(parts[0]!) && isConfigFile(name)) return "file";
  return undefined;
}

const isWatchedFile = (t: Target, p: string): boolean => {
  const role = roleOf(t, p, "file");
  return role === "file" || (role === "self" && t.kind === "file");
};

/** PATH as watched: a directory unless it is (or, missing, is named like) a config file. */
function targetOf(pathArg: string): Target {
  const path = resolve(pathArg);
  const stats = statSync(path, { throwIfNoEntry: false });
  const kind = stats ? (stats.isDirectory() ? "dir" : "file") : isConfigFile(basename(path)) ? "file" : "dir";
  return { path, kind, root: existingAncestor(dirname(path)) };
}

/** Reported paths, passed on in one call once no event came for the window (10 windows at most). */
function debouncer(options: WatchOptions) {
  const { onChange, onError, debounceMs = 1 } = options;
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let firstAt = 0;
  let closed = false;
  const flush = () => {
    timer = undefined;
    const paths = [...pending];
    pending.clear();
    try {
      onChange(paths);
    } catch (error) {
      if (!onError) throw error;
      onError(toError(error));
    }
  };
  return {
    report(p: string) {
      if (closed) return;
      const now = Date.now();
      if (timer === undefined) firstAt = now;
      else clearTimeout(timer);
      pending.add(p);
      timer = setTimeout(flush, Math.max(0, Math.min(debounceMs, firstAt + 10 * debounceMs - now)));
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Watched paths that are symlinks, and where they point: resolved synchronously when chokidar
 * reports them, so that no swap slips in between. A swap that keeps the old target (or `ln -sfn` on
 * a symlinked PATH) is seen by `recheck`, run after each raw fs event (the rename of `..data_tmp`
 * over `..data` is one); events during a pass trigger one more. A link to a directory (PATH, an
 * environment) that points elsewhere leaves chokidar watching the old one: restart.
 */
function linkTracker(report: (path: string) => void, restart: () => void, isClosed: () => boolean) {
  const links = new Map<string, string>();
  let checking = false;
  let again = false;
  const pass = async () => {
    for (const [p, was] of links) {
      const now = await realpath(p).catch(() => undefined);
      if (isClosed()) return;
      if (now === was || links.get(p) !== was) continue;
      if (now === undefined) links.delete(p);
      else links.set(p, now);
      report(p);
      if (now !== undefined && statSync(now, { throwIfNoEntry: false })?.isDirectory()) restart();
    }
  };
  return {
    /** Notes whether `p` is a symlink, and where it points. */
    track(p: string) {
      try {
        if (lstatSync(p).isSymbolicLink()) links.set(p, realpathSync(p));
        else links.delete(p);
      } catch {
        links.delete(p);
      }
    },
    forget: (p: string) => void links.delete(p),
    async recheck() {
      if (links.size === 0) return;
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          await pass();
        } while (again && !isClosed());
      } finally {
        checking = false;
      }
    },
  };
}

interface WatchHandlers {
  report(path: string): void;
  links: ReturnType<typeof linkTracker>;
  /** Every watcher not yet closed: the new one joins at once, so a close while it starts reaches it. */
  live: Set<FSWatcher>;
  onError?: (error: Error) => void;
  isClosed(): boolean;
}

/** One chokidar watcher on the target's root, resolved once it is ready. */
async function startChokidar(target: Target, { report, links, live, onError, isClosed }: WatchHandlers): Promise<FSWatcher> {
  const levels = relative(target.root, target.path).split(sep).length;
  const watcher = watch(target.root, {
    ignoreInitial: false, // the initial adds say which paths are symlinks; they are not reported
    followSymlinks: true, // a symlinked config file is watched at its target: edits to it are seen
    depth: target.kind === "dir" ? levels + 1 : levels - 1,
    ignored: (p, s) => roleOf(target, p, typeOf(s)) === undefined,
  });
  live.add(watcher);
  let ready = false;
  watcher.on("all", (event, p) => {
    const role = roleOf(target, p, event === "addDir" || event === "unlinkDir" ? "dir" : "file");
    if (role === undefined || role === "root" || isClosed()) return;
    if (event === "unlink" || event === "unlinkDir") links.forget(p);
    else links.track(p);
    if (!ready) return;
    // A directory on the way to a missing PATH appeared: PATH may be complete already, and
    // chokidar reads a new directory before watching it, so let a reload look.
    if (role === "chain") {
      if (event === "addDir") report(target.path);
    } else report(p);
  });
  watcher.on("raw", (event, _name, details) => {
    if (isClosed()) return;
    void links.recheck();
    // chokidar passes on one change of a file per 50 ms and drops the others; a config file's
    // own raw change event reports it anyway (the debounce folds it with chokidar's).
    const watched = (details as { watchedPath?: string } | undefined)?.watchedPath;
    if (ready && event === "change" && watched !== undefined && isWatchedFile(target, resolve(watched))) report(resolve(watched));
  });
  watcher.on("error", (error) => {
    if (!isClosed()) onError?.(toError(error));
  });
  await new Promise<void>((done) => watcher.once("ready", done));
  ready = true;
  return watcher;
}

export async function watchConfig(options: WatchOptions): Promise<ConfigWatcher> {
  const target = targetOf(options.path);
  let closed = false;
  const isClosed = () => closed;
  const debounce = debouncer(options);
  const live = new Set<FSWatcher>();
  let current: FSWatcher | undefined;
  const start = () => startChokidar(target, { report: debounce.report, links, live, onError: options.onError, isClosed });

  // The old watcher goes first: chokidar instances share one fs.watch handle per path, so a new one
  // would attach to the old, stale one. Reporting PATH once ready covers what changed meanwhile.
  let restarting = Promise.resolve();
  const restart = () => {
    restarting = restarting.then(async () => {
      if (closed || !current) return;
      live.delete(current);
      await current.close();
      current = await start();
      debounce.report(target.path);
    });
  };
  const links = linkTracker(debounce.report, restart, isClosed);

  current = await start();
  return {
    restart,
    async close() {
      if (closed) return;
      closed = true;
      debounce.close();
      await Promise.all([...live].map((w) => w.close()));
    },
  };
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
