/**
 * The commands a reader types, as the README and docs/ write them, run where the reader is: in
 * the clone or a project that has flagserve installed, where only `npx flagserve` finds it (a
 * bare `flagserve` is "command not found" until `npm link`). The same for the examples of every
 * command's --help, which docs/cli.md shows.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { helpOf } from "../../scripts/docs.js";
import { createProgram } from "../../src/cli/main.js";
import type { Command } from "commander";
import { PAGES, ROOT } from "./pages.js";

/** A bare `flagserve` where a command starts: at the line's start, after a prompt, `&&`, `;`, `|`, `&` or `$(`. */
const BARE = /(?:^|\$ |&& |; |\| |& |\$\()flagserve(?= |$)/m;

/** Lines of the page's shell blocks, and of its text blocks that show a typed command (`$ ...`). */
function typedLines(page: string): { line: number; text: string }[] {
  const lines = readFileSync(join(ROOT, page), "utf8").split("\n");
  const typed: { line: number; text: string }[] = [];
  let info: string | undefined;
  for (const [i, line] of lines.entries()) {
    const fence = /^\s*```(.*)$/.exec(line);
    if (fence) {
      info = info === undefined ? fence[1]!.trim() : undefined;
      continue;
    }
    if (info === undefined) continue;
    const text = line.trim();
    if (/^(sh|bash)\b/.test(info) && !text.startsWith("#")) typed.push({ line: i + 1, text });
    else if (text.startsWith("$ ")) typed.push({ line: i + 1, text });
  }
  return typed;
}

describe("commands as the pages write them", () => {
  it.each(PAGES)("%s: every flagserve command a reader types goes through npx", (page) => {
    const bare = typedLines(page).filter(({ text }) => BARE.test(text));
    expect(bare.map(({ line, text }) => `${page}:${line}: ${text}`)).toEqual([]);
    // In prose: "run `flagserve ...`".
    expect(readFileSync(join(ROOT, page), "utf8")).not.toMatch(/\brun `flagserve /i);
  });

  it("every command's --help gives its examples through npx", () => {
    const paths = (command: Command, path: string[] = []): string[][] => [
      path,
      ...command.commands.filter((c) => c.name() !== "help").flatMap((c) => paths(c, [...path, c.name()])),
    ];
    const examples = paths(createProgram()).flatMap((path) =>
      helpOf(path)
        .split("\n")
        .filter((l) => l.trimStart().startsWith("$ "))
        .map((l) => `flagserve ${path.join(" ")} --help: ${l.trim()}`),
    );
    expect(examples.length).toBeGreaterThan(20);
    expect(examples.filter((l) => BARE.test(l.slice(l.indexOf(": ") + 2)))).toEqual([]);
  });

  it("the README's flagd step does not start a second server on the first one's port", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const at = readme.indexOf("npx flagserve --flagd-port");
    const before = readme.slice(readme.lastIndexOf("\n\n", readme.lastIndexOf("```sh", at) - 3), at); // the paragraph before the block
    const block = readme.slice(at, readme.indexOf("```", at));
    expect(before).toMatch(/stop the server you started\s+above/i);
    expect(block).toMatch(/--flagd-port \d+ --port (?!8080)\d+/);
  });
});
