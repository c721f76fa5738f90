/**
 * Shared by the CLI tests: run a command to its end, in this process (runCli, what the binary
 * runs) or as the real binary where the process itself is the point; clean up what a test started.
 */
import { afterEach } from "vitest";
import { runCli as runInProcess } from "../../src/cli/main.js";
import { runCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `flagserve ARGS` and waits for it to exit (killed after `timeoutMs`). */
export async function run(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number } = {},
): Promise<Finished> {
  const cli = runCli(args, options);
  if (options.stdin !== undefined) cli.child.stdin.end(options.stdin);
  else cli.child.stdin.end();
  const timer = setTimeout(() => cli.child.kill("SIGKILL"), options.timeoutMs ?? 15_000);
  const { code } = await cli.exited;
  clearTimeout(timer);
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

let previousRun: Promise<unknown> = Promise.resolve();

/**
 * Runs `flagserve ARGS` in this process to its end: the exit code and what it printed, as `run`
 * gives them for the binary. `cwd` and `env` apply for the run (process.chdir: the forks pool);
 * runs are queued, as the commands print through one shared output.
 */
export function runHere(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Finished> {
  const result = previousRun.then(async () => {
    let stdout = "";
    let stderr = "";
    const [cwd, env] = [process.cwd(), { ...process.env }];
    if (options.cwd !== undefined) process.chdir(options.cwd);
    Object.assign(process.env, { NO_COLOR: "1", ...options.env });
    try {
      const code = await runInProcess(args, {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      });
      return { code, stdout, stderr };
    } finally {
      process.chdir(cwd);
      // As it was, including what a command set (`--insecure` sets NODE_TLS_REJECT_UNAUTHORIZED).
      for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
      Object.assign(process.env, env);
    }
  });
  previousRun = result.catch(() => undefined);
  return result;
}

/** Registers cleanups run after each test, last first. */
export function cleanupAfterEach() {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    later: (fn: () => unknown) => cleanups.push(fn),
    /** A temporary directory holding `files`, removed after the test. */
    async dir(files: Record<string, string> = {}): Promise<TempDir> {
      const dir = await tempDir("flagserve-cli-");
      for (const [name, content] of Object.entries(files)) await dir.write(name, content);
      return dir;
    },
    /** A process killed after the test if still running. */
    track(cli: CliProcess): CliProcess {
      cleanups.push(() => cli.stop("SIGKILL"));
      return cli;
    },
  };
}
