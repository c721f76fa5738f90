/** The `flagserve` program. Exit codes: 0 ok, 1 invalid configuration or failed check, 2 usage error. */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { keysCommand } from "./keys.js";
import { serveCommand } from "./serve.js";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

export function createProgram(): Command {
  const program = new Command("flagserve")
    .description("A local feature-flag server: YAML flag files served over OFREP, with live reload and change events")
    .version(version, "-v, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  program.addCommand(serveCommand(), { isDefault: true });
  program.addCommand(keysCommand());
  const strict = (command: Command) => {
    command.exitOverride().showHelpAfterError("(run with --help for usage)");
    command.commands.forEach(strict);
  };
  program.commands.forEach(strict);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // `flagserve | head` must not die with EPIPE.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  try {
    await createProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; everything else commander rejects is a usage error.
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    process.stderr.write(`flagserve: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
