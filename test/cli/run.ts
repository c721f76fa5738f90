/** Shared by the CLI tests: run the real binary to its end, clean up what a test started. */
import { afterEach } from "vitest";
import { runCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `flagserve ARGS` and waits for it to exit (killed after `timeoutMs`). */
export async function run(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number } = {}): Promise<Finished> {
  const cli = runCli(args, options);
  if (options.stdin !== undefined) cli.child.stdin.end(options.stdin);
  else cli.child.stdin.end();
  const timer = setTimeout(() => cli.child.kill("SIGKILL"), options.timeoutMs ?? 15_000);
  const { code } = await cli.exited;
  clearTimeout(timer);
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
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
