/** Runs the real `flagserve` binary (bin/flagserve.js, built by `npm test`'s pretest step). */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/flagserve.js", import.meta.url));

export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (and signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when stdout or stderr matches, rejects if the process exits first or time runs out. */
  waitFor(pattern: RegExp, stream?: "stdout" | "stderr", timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
  });
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    for (const l of listeners) l();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
    for (const l of listeners) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      resolve({ code, signal });
      for (const l of listeners) l();
    }),
  );
  let ended = false;
  void exited.then(() => (ended = true));

  const waitFor: CliProcess["waitFor"] = (pattern, stream = "stdout", timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const match = (stream === "stdout" ? out : err).match(pattern);
        if (match) return done(() => resolve(match));
        if (ended || child.exitCode !== null) {
          done(() => reject(new Error(`flagserve exited (${child.exitCode}) before ${pattern}\nstdout: ${out}\nstderr: ${err}`)));
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`timed out waiting for ${pattern}\nstdout: ${out}\nstderr: ${err}`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Starts `flagserve ARGS --port 0` and returns its URL from the `ready` line. */
export async function startCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const cli = runCli([...args, "--port", "0"], options);
  const [, url] = await cli.waitFor(/^ready (\S+)\n/m);
  return { cli, url: url! };
}
