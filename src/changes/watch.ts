/**
 * Watches the config PATH and extra files (the key state file) and calls back, debounced, with
 * the paths that changed. The callee reloads everything, so a spurious call costs a reload and
 * nothing else; a missed one leaves stale flags. Hence:
 * - Each target is watched through the DIRECTORY that holds it (its parent, or the nearest
 *   ancestor that exists), never through a handle on the file alone: flagd lost its watch when a
 *   file was renamed over or deleted (flagd #42, #1876). Deleting and re-creating the file, the
 *   config directory, or the state directory is therefore still seen.
 * - `awaitWriteFinish` holds add/change until the file's size was stable for 40 ms, so a
 *   half-written file is not reported; `atomic` (chokidar's default) turns delete + re-create
 *   within 100 ms into one change.
 * - Kubernetes ConfigMap volumes swap the `..data` symlink; the config files are symlinks through
 *   it. chokidar only reports that when the old target is deleted (it follows the link and sees
 *   the inode go), and misses a swap that leaves the old directory in place, so every watched
 *   path that is a symlink has its realpath re-checked after each raw fs event (see `recheck`).
 */
import { watch, type FSWatcher } from "chokidar";
import { lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, extname, relative, resolve, sep } from "node:path";

export interface ConfigWatcher {
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Config PATH: a directory of environment files/subdirectories, or a single file. */
  path: string;
  /** Also watch this file (the key state file, e.g. <stateDir>/keys.json); it may not exist yet. */
  extraFiles?: string[];
  /** Called (debounced) after anything relevant changed, with the absolute paths involved. */
  onChange: (paths: string[]) => void;
  /** Debounce window in ms (default 25): it restarts on each event, up to 10 windows in all. */
  debounceMs?: number;
  onError?: (error: Error) => void;
}

/** What a watched path is to a target; undefined: not relevant. */
type Role = "root" | "chain" | "self" | "env" | "file" | "unknown";

interface Target {
  /** Absolute path of the config PATH or extra file. */
  path: string;
  /** "dir": a config directory (environment files and subdirectories); "file": this file only. */
  kind: "dir" | "file";
  /** The directory chokidar watches: the nearest existing ancestor of the target's parent. */
  root: string;
  watcher?: FSWatcher;
  /** Restarts run one after another (see `recheck`). */
  restarting?: Promise<void>;
}

const STABILITY_MS = 40;
const CONFIG_EXT = new Set([".yaml", ".yml", ".json"]);

/**
 * Dot-files (editor locks such as `.#flags.yaml`, Kubernetes' `..data` and `..<timestamp>`
 * directories), backups, swap files and vim's write-test file `4913`.
 */
const isJunk = (name: string) =>
  name.startsWith(".") || name.endsWith("~") || name === "4913" || /\.(swp|swo|swx|tmp)$/i.test(name);
const isConfigFile = (name: string) => !isJunk(name) && CONFIG_EXT.has(extname(name).toLowerCase());

const typeOf = (stats: Stats | undefined): "dir" | "file" | undefined =>
  stats?.isDirectory() ? "dir" : stats?.isFile() ? "file" : undefined; // a symlink is not known yet

/** The nearest existing directory at or above `dir`. */
function existingAncestor(dir: string): string {
  for (;;) {
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return dir;
    const up = dirname(dir);
    if (up === dir) return dir;
    dir = up;
  }
}

/**
 * The role of `p` for a target. A directory target admits its files and each subdirectory's
 * files (one environment each); a file target admits the file only. Directories between the
 * watched root and the target ("chain") are admitted so that creating them later is noticed.
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

export async function watchConfig(options: WatchOptions): Promise<ConfigWatcher> {
  const { onChange, onError } = options;
  const debounceMs = options.debounceMs ?? 25;
  let closed = false;

  const targets: Target[] = [];
  const configPath = resolve(options.path);
  const configStats = statSync(configPath, { throwIfNoEntry: false });
  // A PATH that does not exist yet is a directory unless it is named like a config file.
  const configKind = configStats ? (configStats.isDirectory() ? "dir" : "file") : isConfigFile(basename(configPath)) ? "file" : "dir";
  targets.push({ path: configPath, kind: configKind, root: existingAncestor(dirname(configPath)) });
  for (const extra of options.extraFiles ?? []) {
    const path = resolve(extra);
    // From the state directory's parent, so that `rm -rf <stateDir>` and its re-creation are seen.
    targets.push({ path, kind: "file", root: existingAncestor(dirname(dirname(path))) });
  }

  // Debounce: collect paths; flush once no event came for `debounceMs`, or 10 windows after the first.
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let firstAt = 0;
  const flush = () => {
    timer = undefined;
    if (closed || pending.size === 0) return;
    const paths = [...pending];
    pending.clear();
    try {
      onChange(paths);
    } catch (error) {
      if (!onError) throw error;
      onError(toError(error));
    }
  };
  const report = (path: string) => {
    if (closed) return;
    const now = Date.now();
    if (timer === undefined) firstAt = now;
    else clearTimeout(timer);
    pending.add(path);
    timer = setTimeout(flush, Math.max(0, Math.min(debounceMs, firstAt + 10 * debounceMs - now)));
  };

  // Symlinked paths and where they point (`flags.yaml -> ..data/flags.yaml`, a PATH that is a
  // link to a directory). Tracked synchronously on add so that no swap slips in between.
  const links = new Map<string, { real: string; target: Target }>();
  const track = (t: Target, path: string) => {
    try {
      if (lstatSync(path).isSymbolicLink()) links.set(path, { real: realpathSync(path), target: t });
      else links.delete(path);
    } catch {
      links.delete(path);
    }
  };

  /**
   * Re-resolve every tracked symlink; a new target is a change. Runs after raw fs events in any
   * watched directory (the rename of `..data_tmp` over `..data` is one, in the directory holding
   * the links). A link to a directory that now points elsewhere leaves chokidar watching the old
   * directory, so that target's watcher is restarted.
   */
  let checking = false;
  let again = false;
  const recheck = async () => {
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      do {
        again = false;
        for (const [path, link] of links) {
          const real = await realpath(path).catch(() => undefined);
          if (closed) return;
          if (real === link.real || links.get(path) !== link) continue;
          if (real === undefined) links.delete(path);
          else links.set(path, { ...link, real });
          report(path);
          if (real !== undefined && statSync(real, { throwIfNoEntry: false })?.isDirectory()) restart(link.target);
        }
      } while (again && !closed);
    } finally {
      checking = false;
    }
  };

  const live = new Set<FSWatcher>();
  const start = async (t: Target): Promise<FSWatcher> => {
    const levels = relative(t.root, t.path).split(sep).length;
    const watcher = watch(t.root, {
      ignoreInitial: false, // the initial adds tell which paths are symlinks; they are not reported
      followSymlinks: true, // a symlinked config file is watched at its target, so edits to it are seen
      depth: t.kind === "dir" ? levels + 1 : levels - 1,
      ignored: (p, stats) => roleOf(t, p, typeOf(stats)) === undefined,
      awaitWriteFinish: { stabilityThreshold: STABILITY_MS, pollInterval: 10 },
    });
    live.add(watcher);
    let ready = false;
    watcher.on("all", (event, p) => {
      if (process.env.WDEBUG) console.log("  chokidar", event, p);
      const isDir = event === "addDir" || event === "unlinkDir";
      const role = roleOf(t, p, isDir ? "dir" : "file");
      if (role === undefined || role === "root" || closed) return;
      if (event === "unlink" || event === "unlinkDir") links.delete(p);
      else track(t, p);
      if (!ready) return;
      // A directory on the way to the target appeared (`mkdir -p <stateDir>`): chokidar reads it
      // before watching it, so a file created in between would be missed; a reload covers it.
      if (role === "chain") {
        if (event === "addDir") report(t.path);
        return;
      }
      report(p);
    });
    watcher.on("raw", () => {
      if (links.size > 0 && !closed) void recheck();
    });
    watcher.on("error", (error) => {
      if (!closed) onError?.(toError(error));
    });
    await new Promise<void>((done) => watcher.once("ready", done));
    ready = true;
    return watcher;
  };

  /**
   * A fresh watcher for `t`. The old one goes first: chokidar shares one fs.watch handle per path
   * between its instances, so a new instance would attach to the old, stale handle. Whatever
   * changed in between is covered by reporting the target once the new watcher is ready.
   */
  const restart = (t: Target) => {
    t.restarting = (t.restarting ?? Promise.resolve()).then(async () => {
      const old = t.watcher;
      if (closed || !old) return;
      live.delete(old);
      await old.close();
      t.watcher = await start(t);
      report(t.path);
    });
  };

  await Promise.all(targets.map(async (t) => (t.watcher = await start(t))));

  return {
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      pending.clear();
      await Promise.all([...live].map((w) => w.close()));
    },
  };
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
