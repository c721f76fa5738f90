/**
 * A line feed, tab or line separator in a flag key, variant or file name never reaches the
 * terminal raw: it cannot forge a line of the server log, `override list`, `diff` or `test`.
 */
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { createLogger, type LogLevel } from "../../src/log/logger.js";
import { runHere } from "../cli/run.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { until } from "../helpers/wait.js";

/** What each output must not show raw: each would start a line, or move text, in a terminal. */
const RAW = /[\t\r\u2028\u2029\u202e\u0085]/;
/** A key whose line feed would start a forged line. */
const KEY = "evil\nFORGED line\u2028sep\ttab\u202erev";
const VARIANT = "on\nFORGED variant";
const ADMIN_TOKEN = "admin-token-for-terminal-tests-01";

const flagsYaml = (key: string) =>
  `flags:\n  ${JSON.stringify(key)}:\n    variants: { ${JSON.stringify(VARIANT)}: true, "off": false }\n    defaultVariant: "off"\n`;

/** No line of `text` is forged: none starts with what followed a line feed in a key. */
function expectNoForgedLine(text: string): void {
  expect(text).not.toMatch(RAW);
  for (const line of text.split("\n")) expect(line).not.toMatch(/^FORGED/);
}

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir("flagserve-terminal-");
});

describe("the server log", () => {
  let server: FlagServer;
  const lines: string[] = [];
  afterAll(() => server?.close());

  it("is one line per record: a flag added with a line feed in its key is logged on one line", async () => {
    await dir.write("log/flags/dev.yaml", "flags: {}\n");
    const logger = createLogger("text", (line: string, _level: LogLevel) => void lines.push(line));
    server = await createFlagServer({ config: dir.file("log/flags"), stateDir: dir.file("log/state"), logger });
    await writeFile(dir.file("log/flags/dev.yaml"), flagsYaml(KEY));
    await until("the flag is announced", () => lines.some((line) => line.includes("FORGED line")));
    for (const line of lines) {
      expect(line.endsWith("\n")).toBe(true);
      expectNoForgedLine(line.slice(0, -1));
      expect(line.slice(0, -1)).not.toContain("\n");
    }
    expect(lines.join("")).toContain("evil\\u000aFORGED line\\u2028sep\\u0009tab\\u202erev");
  });
});

describe("flagserve override list", () => {
  let server: FlagServer;
  afterAll(() => server?.close());

  it("prints a row per override; a line feed in a key or variant stays in its row", async () => {
    await dir.write("override/flags/dev.yaml", flagsYaml(KEY));
    server = await createFlagServer({ config: dir.file("override/flags"), stateDir: dir.file("override/state"), adminToken: ADMIN_TOKEN });
    await server.overrides.set("dev", KEY, { variant: VARIANT });
    const list = await runHere(["override", "list", "--url", server.url, "--admin-token", ADMIN_TOKEN]);
    expect(list.code).toBe(0);
    expectNoForgedLine(list.stdout);
    expect(list.stdout.trimEnd().split("\n")).toEqual([
      "dev  evil\\u000aFORGED line\\u2028sep\\u0009tab\\u202erev  variant on\\u000aFORGED variant",
    ]);
  });
});

describe("flagserve diff", () => {
  it("text and markdown: an added flag with a line feed in its key is one item", async () => {
    await dir.write("diff/old/dev.yaml", "flags: {}\n");
    await dir.write("diff/new/dev.yaml", flagsYaml(KEY));
    for (const format of ["text", "markdown"]) {
      const diff = await runHere(["diff", dir.file("diff/old"), dir.file("diff/new"), "--format", format]);
      expectNoForgedLine(diff.stdout);
      expect(diff.stdout).toContain("evil\\u000aFORGED line");
    }
  });
});

describe("flagserve test", () => {
  it("human and JUnit reports: a failing case's flag key and name keep to their lines", async () => {
    await dir.write("test/flags/dev.yaml", flagsYaml(KEY));
    const name = "case\nFORGED case";
    await dir.write(
      "test/flags/dev.test.yaml",
      `tests:\n  - name: ${JSON.stringify(name)}\n    flag: ${JSON.stringify(KEY)}\n    expect: { variant: ${JSON.stringify(VARIANT)} }\n`,
    );
    const human = await runHere(["test", dir.file("test/flags")]);
    expect(human.code).toBe(1);
    expectNoForgedLine(human.stdout);
    expect(human.stdout).toContain("flag:     evil\\u000aFORGED line");
    const junit = await runHere(["test", dir.file("test/flags"), "--reporter", "junit"]);
    expect(junit.code).toBe(1);
    expectNoForgedLine(junit.stdout);
  });
});
