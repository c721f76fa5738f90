/**
 * Started through npm (`npx flagserve`, `npm exec`, `npm run`), flagserve runs under npm and,
 * usually, a `sh -c` npm puts in between. npm forwards SIGINT and SIGTERM to that shell only, and
 * a shell that does not exec its last command (dash, /bin/sh on Debian and Ubuntu) ends or waits
 * without passing them on: `kill $!` on `npx flagserve &` left the server holding its port. So
 * under npm, flagserve watches npm and the shell, and stops when either is gone.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

interface ProcessInfo {
  ppid: number;
  /** R, S, Z, ... (Linux only; "" elsewhere). */
  state: string;
  command: string;
}

/** From /proc (Linux). */
export function procInfo(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const [state = "", ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    return { ppid: Number(ppid), state, command };
  } catch {
    return undefined;
  }
}

/** From `ps` (macOS and the other Unix systems; no state). */
export function psInfo(pid: number): ProcessInfo | undefined {
  try {
    const line = execFileSync("ps", ["-o", "ppid=", "-o", "args=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const match = /^(\d+)\s+(.*)$/.exec(line);
    return match ? { ppid: Number(match[1]), state: "", command: match[2]! } : undefined;
  } catch {
    return undefined;
  }
}

/** A process's parent, state and command line; undefined when unknown (and on Windows). */
export function processInfo(pid: number): ProcessInfo | undefined {
  if (process.platform === "linux") return procInfo(pid);
  return process.platform === "win32" ? undefined : psInfo(pid);
}

/** npm's process title is "npm exec …", "npm run …" (older npx: "npx"); before it is set, node running npm-cli.js. */
export const isNpm = (command: string): boolean => /^np[mx](\s|$)|[/\\]np[mx]-cli\.js(\s|$)/.test(command);

/**
 * The processes that started this one for npm: [npm] or [shell, npm], nearest first; [] when not
 * started by npm (no npm_lifecycle_event) or npm is not the parent or grandparent.
 */
export function npmLaunchers(env: NodeJS.ProcessEnv = process.env, parent: number = process.ppid): number[] {
  if (!env.npm_lifecycle_event) return [];
  const chain: number[] = [];
  let pid = parent;
  for (let depth = 0; depth < 2 && pid > 1; depth++) {
    const info = processInfo(pid);
    if (!info) return [];
    chain.push(pid);
    if (isNpm(info.command)) return chain;
    pid = info.ppid;
  }
  return [];
}

/** Gone: no such process, or one that has ended and waits to be reaped. */
export function isGone(pid: number): boolean {
  if (process.platform === "linux") {
    const info = processInfo(pid);
    return info === undefined || info.state === "Z" || info.state === "X";
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Calls `onGone` once, with the first of `pids` found gone; checked every `intervalMs`. Returns a stop function. */
export function watchProcesses(pids: number[], onGone: (pid: number) => void, intervalMs = 500): () => void {
  if (pids.length === 0) return () => {};
  const timer = setInterval(() => {
    const gone = pids.find(isGone);
    if (gone === undefined) return;
    clearInterval(timer);
    onGone(gone);
  }, intervalMs);
  timer.unref(); // never what keeps the process alive
  return () => clearInterval(timer);
}
