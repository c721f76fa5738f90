/**
 * docs/cli.md shows every command's `--help` as the program prints it (npm run docs:generate
 * writes it), so the page cannot drift from the program.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { CLI_DOC, documentedCommands, helpOf, renderCliDoc } from "../../scripts/docs.js";
import { createProgram } from "../../src/cli/main.js";
import { run } from "../cli/run.js";

const page = readFileSync(CLI_DOC, "utf8");

/** "flagserve", "flagserve serve", "flagserve keys list", ...: every command but commander's `help`. */
function commandsOf(command: Command, prefix = "flagserve"): string[] {
  return [prefix, ...command.commands.filter((c) => c.name() !== "help").flatMap((c) => commandsOf(c, `${prefix} ${c.name()}`))];
}

describe("docs/cli.md", () => {
  it("holds each command's help exactly as the program prints it (run npm run docs:generate)", () => {
    expect(page).toBe(renderCliDoc(page));
  });

  it("documents every command of the program", () => {
    expect([...documentedCommands(page)].sort()).toEqual(commandsOf(createProgram()).sort());
  });

  it("shows what the real program prints to a pipe", async () => {
    const real = await run(["keys", "rotate", "--help"]);
    expect(real.code).toBe(0);
    expect(real.stdout).toBe(helpOf(["keys", "rotate"]));
    expect(page).toContain(`$ npx flagserve keys rotate --help\n${real.stdout.trimEnd()}\n\`\`\``);
  });
});
