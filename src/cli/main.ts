/**
 * The `flagserve` program. Exit codes: 0 ok, 1 invalid configuration or failed check, 2 usage
 * error. Each command loads what it needs when it runs, so `validate` in a pre-commit hook does
 * not pay for the HTTP server.
 */
import { Command, CommanderError } from "commander";
import { formatRecord } from "../log/logger.js";
import { evalCommand } from "./eval.js";
import { healthCommand } from "./health.js";
import { eventsCommand } from "./events.js";
import { initCommand } from "./init.js";
import { keysCommand } from "./keys.js";
import { manifestCommand } from "./manifest.js";
import { overrideCommand } from "./override.js";
import { output, VERSION, type TextSink } from "./paths.js";
import { serveCommand } from "./serve.js";
import { sessionCommand } from "./session.js";
import { diffCommand } from "./diff.js";
import { testCommand } from "./test.js";
import { validateCommand } from "./validate.js";

const commandPath = (command: Command): string => (command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name());

/** `args`: the words after `flagserve` (a usage error of `serve --json-logs` is a JSON line too). */
export function createProgram(args: readonly string[] = process.argv.slice(2)): Command {
  const program = new Command("flagserve")
    .description("A local feature-flag server: YAML flag files served over OFREP, with live reload and change events")
    .version(VERSION, "-v, --version")
    .addHelpText(
      "after",
      `
With no command, flagserve serves: "flagserve ./flags" is "flagserve serve ./flags".
Exit status: 0 ok, 1 invalid configuration or failed check, 2 usage error.

Examples:
  $ npx flagserve init                     write a starter in ./flags
  $ npx flagserve                          serve ./flags (or the bundled example) on :8080
  $ npx flagserve validate                 check ./flags, e.g. in a pre-commit hook or CI
  $ npx flagserve eval new-checkout --env development --context '{"email":"ann@example.com"}'
  $ npx flagserve events http://127.0.0.1:8080 --key dev-example-key
  $ npx flagserve health --wait 30         wait until a server on :8080 is ready (CI, HEALTHCHECK)
  $ npx flagserve override set new-checkout on --env development
  $ npx flagserve session show checkout-test   what an app asked with X-Flagserve-Session: checkout-test
  $ npx flagserve test --coverage          run the cases in flags/*.test.yaml, report untested branches
  $ npx flagserve diff --git origin/main   what the flag files change since origin/main
  $ npx flagserve manifest -e production   flags.json for openfeature generate (typed flags)
Run "flagserve <command> --help" for a command's options.`,
    );
  program.addCommand(serveCommand(), { isDefault: true });
  program.addCommand(validateCommand());
  program.addCommand(initCommand());
  program.addCommand(keysCommand());
  program.addCommand(evalCommand());
  program.addCommand(eventsCommand());
  program.addCommand(healthCommand());
  program.addCommand(overrideCommand());
  program.addCommand(sessionCommand());
  program.addCommand(testCommand());
  program.addCommand(diffCommand());
  program.addCommand(manifestCommand());

  // Every command: throw instead of exiting (runCli maps the code), a one-line error followed by
  // where to find the usage, and help and errors written where the commands print.
  const serve = program.commands.find((c) => c.name() === "serve")!;
  const jsonLogs = args.includes("--json-logs");
  const strict = (command: Command) => {
    command.exitOverride().showHelpAfterError(`(run "${commandPath(command)} --help" for usage)`);
    command.configureOutput({
      writeOut: (text) => output.stdout.write(text),
      writeErr: (text) => {
        // `serve --json-logs`: usage errors are JSON lines too, like everything else it prints.
        if (!jsonLogs || (command !== program && command !== serve)) return output.stderr.write(text);
        for (const line of text.split("\n")) if (line.trim() !== "") output.stderr.write(formatRecord("json", "error", line.trim()));
      },
    });
    command.commands.forEach(strict);
  };
  strict(program);
  return program;
}

/**
 * Runs `flagserve ARGS` and returns its exit code (what a command sets in process.exitCode, 2 for
 * a usage error); the commands print to `io`. How the tests run a command in-process; one run at
 * a time. A server started by `serve` keeps running after it returns.
 */
export async function runCli(
  args: readonly string[],
  io: { stdout: TextSink; stderr: TextSink } = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const [before, exitCode] = [{ ...output }, process.exitCode];
  Object.assign(output, io);
  process.exitCode = undefined;
  try {
    await createProgram(args).parseAsync([...args], { from: "user" });
    return Number(process.exitCode ?? 0);
  } catch (error) {
    // --help and --version exit 0; everything else commander rejects is a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    output.stderr.write(`flagserve: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  } finally {
    Object.assign(output, before);
    process.exitCode = exitCode;
  }
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // `flagserve ... | head` must not die with EPIPE.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
  }
  const code = await runCli(argv.slice(2));
  if (code !== 0) process.exitCode = code;
}
