/**
 * docs/testing-flags.md: its example files pass as written, and the outputs it shows are what
 * the commands print for them (the examples are extracted from the page itself).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { diffConfigurations, formatDiff } from "../../src/review/index.js";
import { testExitCode, testFlags } from "../../src/testing/index.js";
import { humanReport } from "../../src/testing/reporters.js";
import { tempDir } from "../helpers/files.js";

const PAGE = readFileSync(new URL("../../docs/testing-flags.md", import.meta.url), "utf8");

/** Fenced blocks of the page: info string and body. */
const blocks = [...PAGE.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)].map(([, lang, body]) => ({ lang: lang!, body: body! }));
/** The example files: YAML blocks whose first line names them. */
const files = Object.fromEntries(
  blocks
    .filter((b) => b.lang === "yaml" && /^# [\w./-]+\.ya?ml\n/.test(b.body))
    .map((b) => [b.body.slice(2, b.body.indexOf("\n")), b.body]),
);
const outputs = blocks.filter((b) => b.lang === "text").map((b) => b.body);

async function examples(edit: (name: string, text: string) => string = (_n, t) => t) {
  const dir = await tempDir();
  for (const [name, text] of Object.entries(files)) if (name.startsWith("flags/")) await dir.write(name, edit(name, text));
  return dir;
}

describe("docs/testing-flags.md", () => {
  it("holds the example flag file, test file and workflow", () => {
    expect(Object.keys(files).sort()).toEqual([".github/workflows/flags.yml", "flags/development.test.yaml", "flags/development.yaml"]);
    const workflow = parse(files[".github/workflows/flags.yml"]!) as { jobs: { flags: { steps: { run?: string }[] } } };
    const runs = workflow.jobs.flags.steps.map((s) => s.run ?? "").join("\n");
    expect(runs).toContain("npx flagserve test flags --coverage");
    expect(runs).toContain("npx flagserve diff --git");
  });

  it("the example passes as written, with every branch reached, as the page shows", async () => {
    const dir = await examples();
    const report = await testFlags({ sources: [dir.file("flags")], coverage: true });
    expect(report.problems).toEqual([]);
    expect(testExitCode(report, 100)).toBe(0);
    expect(outputs).toContain(`${humanReport(report, dir.path)}\n`);
  });

  it("shows the failure and the coverage gaps the page describes", async () => {
    const failing = await examples((_n, text) =>
      text.replace('expect: { variant: "off", reason: SPLIT }', 'expect: { variant: "on", reason: SPLIT }'),
    );
    const failed = await testFlags({ sources: [failing.file("flags")] });
    expect(outputs).toContain(`${humanReport(failed, failing.path)}\n`);

    const fewer = await examples((name, text) =>
      name.endsWith(".test.yaml") ? text.slice(0, text.indexOf("\n  - name: no flag fails")) + "\n" : text,
    );
    const partial = await testFlags({ sources: [fewer.file("flags")], coverage: true });
    expect(testExitCode(partial, 90)).toBe(1);
    expect(outputs).toContain(`${humanReport(partial, fewer.path)}\n`);
  });

  it("the diff it shows is what flagserve diff --git prints for the edit it describes", async () => {
    const dir = await examples();
    const git = (...args: string[]) => execFileSync("git", args, { cwd: dir.path });
    git("init", "-q");
    git("-c", "user.email=d@example.com", "-c", "user.name=d", "commit", "-q", "--allow-empty", "-m", "empty");
    git("add", "-A");
    git("-c", "user.email=d@example.com", "-c", "user.name=d", "commit", "-qm", "flags");
    await dir.write(
      "flags/development.yaml",
      files["flags/development.yaml"]!.replace('"@example.com"', '"@example.org"')
        .replace('defaultVariant: "off"', 'defaultVariant: "on"')
        .replace("[de, fr]", "[de, fr, it]"),
    );
    const cwd = process.cwd();
    process.chdir(dir.path);
    try {
      const report = await diffConfigurations({ git: "HEAD", after: "flags" });
      expect(outputs).toContain(`${formatDiff("text", report)}\n`);
    } finally {
      process.chdir(cwd);
    }
  });
});
