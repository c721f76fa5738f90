/**
 * What one `flagserve test` run may cost: at most MAX_CHECKS checks (docs/testing-flags.md), a
 * test file expanding past them said at the case where it does, and results written as they
 * are made, none kept: a table an alias repeats costs no more to read than once.
 */
import { describe, expect, it } from "vitest";
import { MAX_ALIAS_NODES } from "../../src/config/nesting.js";
import { MAX_CHECKS, testFlags, type CaseResult } from "../../src/testing/index.js";
import { run } from "../cli/run.js";
import { tempDir } from "../helpers/files.js";

const FLAGS = `flags:
  f:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
    targeting: { if: [{ "==": [{ var: n }, 1] }, "on", "off"] }
  g:
    variants: { a: 1 }
    defaultVariant: a
`;

/** A table of `rows` contexts in the first case, repeated by `aliases` more cases (each alias: every row again). */
function aliasedTable(rows: number, aliases: number, expect = "{ errorCode: null }"): string {
  const table = Array.from({ length: rows }, (_, i) => `{ n: ${i} }`).join(", ");
  const lines = ["environment: development", "tests:", `  - { name: a0, flags: "*", contexts: &rows [${table}], expect: ${expect} }`];
  for (let i = 1; i <= aliases; i++) lines.push(`  - { name: a${i}, flags: "*", contexts: *rows, expect: ${expect} }`);
  return `${lines.join("\n")}\n`;
}

async function project(tests: string) {
  const dir = await tempDir("flagserve-test-bounds-");
  await dir.write("flags/development.yaml", FLAGS);
  await dir.write("flags/development.test.yaml", tests);
  return dir;
}

describe("the checks of one run", () => {
  it("a file whose aliases expand it past what any document may (90 aliases of 5 000 rows, the attack pass's 4.55 M checks) is an error; none of it runs", async () => {
    expect(MAX_CHECKS).toBe(100_000);
    const text = aliasedTable(5000, 90);
    const dir = await project(text);
    const report = await testFlags({ sources: [dir.file("flags")] });
    expect(report.passed + report.failed).toBe(0);
    // Refused as it is read (config/nesting.ts), as a flag file would be, before a case is counted.
    expect(report.problems).toEqual([
      {
        file: dir.file("flags/development.test.yaml"),
        line: 1,
        col: 1,
        message: `YAML aliases expand the document to more than ${text.length + MAX_ALIAS_NODES} values; write the repeated parts out`,
      },
    ]);
  });

  it('a run stops at the bound: a table within it that flags: "*" multiplies past it stops there, said at its case', async () => {
    const dir = await project(aliasedTable(50_001, 0)); // 50 001 contexts x 2 flags
    const seen: CaseResult[] = [];
    const report = await testFlags({ sources: [dir.file("flags")], onResult: (r) => seen.push(r) });
    expect(report.passed + report.failed).toBe(MAX_CHECKS);
    expect(seen).toHaveLength(MAX_CHECKS);
    expect(report.results).toEqual([]); // handed over as they came, none kept
    expect(report.problems.map((p) => [p.line, p.message])).toEqual([
      [
        3,
        'case "a0": the test files expand past 100000 checks here (cases x contexts x flags; a run makes at most 100000); the run stopped: split the files or use smaller tables',
      ],
    ]);
  });

  // Three runs of the CLI, each given 30 s (about 5 s alone).
  it("the CLI writes results as they come: 100 000 failing checks run in a small heap, in seconds", { timeout: 90_000 }, async () => {
    // 20 cases over one aliased table of 2 500 rows, 2 flags: 100 000 checks, most of them failing.
    // (Before, each check was kept, some 0.9 KB: this took 365 MB, and 111 s to locate the rows.)
    const dir = await project(aliasedTable(2500, 19, '{ variant: "on" }'));
    // JUnit writes its counts first, so it keeps each check's <testcase> text (not its result) until the end.
    for (const [reporter, heapMb] of [
      ["human", 48],
      ["json", 48],
      ["junit", 128],
    ] as const) {
      const result = await run(["test", "flags", "--reporter", reporter], {
        cwd: dir.path,
        env: { NODE_OPTIONS: `--max-old-space-size=${heapMb}` },
        timeoutMs: 30_000,
      });
      expect(result.code, `${reporter}: ${result.stderr.slice(-300)}`).toBe(1);
      if (reporter === "human") expect(result.stdout).toMatch(/\nFAILED: 20 of 100000 checks passed, 99980 failed\n$/);
      if (reporter === "json") expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, passed: 20, failed: 99980 });
      if (reporter === "junit") expect(result.stdout.match(/<testcase /g)).toHaveLength(100_000);
    }
  });
});
