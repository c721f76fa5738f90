/**
 * Writes what docs/cli.md shows of the program from the program itself, so the page cannot
 * drift from it: each command's `--help`, between markers
 *
 *   <!-- help: flagserve keys rotate -->
 *   ...generated...
 *   <!-- /help -->
 *
 * test/docs/cli-help.test.ts fails when the page is not what this writes. With `--screenshot`
 * it also takes docs/dashboard.png (scripts/screenshot.ts).
 *
 *   npm run docs:generate
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { createProgram } from "../src/cli/main.js";

export const CLI_DOC = fileURLToPath(new URL("../docs/cli.md", import.meta.url));

const MARKER = /<!-- help: (flagserve[a-z ]*?) -->\n[\s\S]*?<!-- \/help -->/g;

/** `flagserve ...PATH --help` as the program prints it to a pipe (80 columns, no colour). */
export function helpOf(path: readonly string[]): string {
  let command: Command = createProgram();
  for (const name of path) {
    const sub = command.commands.find((c) => c.name() === name);
    if (!sub) throw new Error(`no command "flagserve ${path.join(" ")}"`);
    command = sub;
  }
  let text = "";
  for (let c: Command | null = command; c; c = c.parent) {
    c.configureOutput({ writeOut: (s) => (text += s), getOutHelpWidth: () => 80, getOutHasColors: () => false });
  }
  command.outputHelp();
  return text;
}

/** The block a marker holds: the command as typed (through npx, as the docs write commands) and what it prints. */
function helpBlock(name: string): string {
  const path = name.split(" ").slice(1);
  return `<!-- help: ${name} -->\n\`\`\`text\n$ npx ${name} --help\n${helpOf(path).trimEnd()}\n\`\`\`\n<!-- /help -->`;
}

/** The page with every marked block regenerated. */
export function renderCliDoc(page: string): string {
  return page.replace(MARKER, (_block, name: string) => helpBlock(name));
}

/** The commands whose help the page holds, in order. */
export function documentedCommands(page: string): string[] {
  return [...page.matchAll(MARKER)].map((m) => m[1]!);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = readFileSync(CLI_DOC, "utf8");
  const next = renderCliDoc(page);
  if (next !== page) writeFileSync(CLI_DOC, next);
  console.log(`${CLI_DOC}: ${documentedCommands(next).length} help texts${next === page ? ", unchanged" : " written"}`);
  if (process.argv.includes("--screenshot")) {
    const { takeScreenshot } = await import("./screenshot.js");
    console.log(`${await takeScreenshot()} written`);
  }
}
