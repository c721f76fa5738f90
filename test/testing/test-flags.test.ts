/**
 * `flagserve test`: test files beside real flag files, run in-process (testFlags, the function
 * the command calls) and, for exit codes and the JUnit file, by the real CLI.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { schemaAjv, TEST_SCHEMA_FILE, TEST_VALIDATORS_FILE, testValidatorsSource } from "../../scripts/schema-validators.js";
import { describe, expect, it } from "vitest";
import { developmentFile, developmentTestFile } from "../../src/cli/init.js";
import { loadConfig } from "../../src/config/index.js";
import { checkTestFiles, parseTestFile, testExitCode, testFlags } from "../../src/testing/index.js";
import { alwaysAnswers } from "../../src/testing/coverage.js";
import { humanReport, junitReport } from "../../src/testing/reporters.js";
import { tempDir } from "../helpers/files.js";
import { run } from "../cli/run.js";

const FLAGS = `flags:
  new-checkout:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
    targeting:
      if:
        - { ends_with: [{ var: email }, "@example.com"] }
        - "on"
        - if:
            - { "==": [{ var: region }, "eu"] }
            - "off"
  rollout:
    variants: { a: 1, b: 2 }
    defaultVariant: a
    targeting:
      fractional:
        - [a, 50]
        - [b, 50]
  static:
    variants: { x: "X" }
    defaultVariant: x
`;

async function project(tests: string, flags = FLAGS) {
  const dir = await tempDir();
  await dir.write("flags/development.yaml", flags);
  await dir.write("flags/development.test.yaml", tests);
  return dir;
}

describe("flagserve test, in-process", () => {
  it("the starter `flagserve init` writes passes as written, and its test file is not an environment", async () => {
    const dir = await tempDir();
    await dir.write("flags/development.yaml", developmentFile("x"));
    await dir.write("flags/development.test.yaml", developmentTestFile("x"));
    const load = await loadConfig(dir.file("flags"));
    expect([...load.environments.keys()]).toEqual(["development"]);
    expect(load.problems.size).toBe(0);
    const report = await testFlags({ sources: [dir.file("flags")] });
    expect(report.problems).toEqual([]);
    expect(report.failed).toBe(0);
    expect(report.passed).toBe(6);
    expect(testExitCode(report)).toBe(0);
  });

  it("a failure names the case by file:line, the flag, the context, expected and actual", async () => {
    const dir = await project(`tests:
  - name: example.com users get it
    flag: new-checkout
    context: { targetingKey: u1, email: ada@example.com }
    expect: { variant: "on", reason: TARGETING_MATCH }
  - name: wrong on purpose
    flag: new-checkout
    contexts:
      - { targetingKey: u2, email: bob@example.org }
      - { targetingKey: u3, email: eve@example.com }
    expect: { variant: "off", value: false }
`);
    const report = await testFlags({ sources: [dir.file("flags")] });
    expect(report.passed).toBe(2);
    expect(report.failed).toBe(1);
    const failure = report.results.find((r) => !r.passed)!;
    expect(failure).toMatchObject({
      line: 6,
      contextLine: 10,
      flag: "new-checkout",
      environment: "development",
      mismatches: ["variant", "value"],
    });
    expect(failure.actual).toEqual({ value: true, variant: "on", reason: "TARGETING_MATCH" });
    const text = humanReport(report, dir.path);
    expect(text).toContain("FAIL flags/development.test.yaml:6 wrong on purpose (context at line 10)");
    expect(text).toContain('context:  {"targetingKey":"u3","email":"eve@example.com"}');
    expect(text).toContain('expected: variant "off", value false');
    expect(text).toContain('actual:   variant "on", value true, reason TARGETING_MATCH');
    expect(testExitCode(report)).toBe(1);
  });

  it('`context` is shared by the rows of `contexts`; flags: "*" runs every flag; errorCode null means no error', async () => {
    const dir = await project(`tests:
  - name: EU users without a match get off
    flag: new-checkout
    context: { region: eu }
    contexts: [{ targetingKey: a }, { targetingKey: b, email: x@example.org }]
    expect: { variant: "off", reason: TARGETING_MATCH }
  - name: nothing fails with a targetingKey
    flags: "*"
    context: { targetingKey: k }
    expect: { errorCode: null }
  - name: a rollout needs a targetingKey
    flags: [rollout]
    context: {}
    expect: { errorCode: TARGETING_KEY_MISSING }
`);
    const report = await testFlags({ sources: [dir.file("flags")] });
    expect(report.problems).toEqual([]);
    expect(report.results.map((r) => [r.line, r.flag, r.passed])).toEqual([
      [2, "new-checkout", true],
      [2, "new-checkout", true],
      [7, "new-checkout", true],
      [7, "rollout", true],
      [7, "static", true],
      [11, "rollout", true],
    ]);
  });

  it("`now` fixes $flagd.timestamp for time-based rules", async () => {
    const flags = `flags:\n  sale:\n    variants: { "on": true, "off": false }\n    defaultVariant: "off"\n    targeting:\n      if: [{ ">=": [{ var: $flagd.timestamp }, 1767225600] }, "on", null]\n`;
    const dir = await project(
      `tests:
  - { name: before, flag: sale, now: "2025-12-31T23:59:59Z", expect: { variant: "off" } }
  - { name: from new year, flag: sale, now: 1767225600, expect: { variant: "on" } }
  - { name: bad time, flag: sale, now: "soon", expect: { variant: "on" } }
`,
      flags,
    );
    const report = await testFlags({ sources: [dir.file("flags")] });
    expect(report.problems.map((p) => `${p.line} ${p.message}`)).toEqual(["4 now: must be an ISO 8601 date-time or Unix seconds"]);
    await dir.write(
      "flags/development.test.yaml",
      (await readFile(dir.file("flags/development.test.yaml"), "utf8")).split("\n").slice(0, 3).join("\n") + "\n",
    );
    const ok = await testFlags({ sources: [dir.file("flags")] });
    expect(ok.results.map((r) => [r.name, r.passed])).toEqual([
      ["before", true],
      ["from new year", true],
    ]);
  });

  it("cases see --context-value values and overrides as the server applies them", async () => {
    const dir = await project(`tests:
  - name: the region comes from --context-value
    flag: new-checkout
    context: { targetingKey: a }
    expect: { variant: "off", reason: TARGETING_MATCH }
  - name: rollout forced by the overrides file
    flag: rollout
    context: { targetingKey: a }
    expect: { variant: b, reason: STATIC }
`);
    await dir.write("overrides.yaml", "environments:\n  development:\n    rollout: { variant: b }\n");
    const plain = await testFlags({ sources: [dir.file("flags")] });
    expect(plain.failed).toBe(2);
    const report = await testFlags({
      sources: [dir.file("flags")],
      contextValues: { region: "eu" },
      overridesFile: dir.file("overrides.yaml"),
    });
    expect(report.failed).toBe(0);
    // Only read: the overrides file is as it was.
    expect(await readFile(dir.file("overrides.yaml"), "utf8")).toBe("environments:\n  development:\n    rollout: { variant: b }\n");
  });

  it("bad test files: one line each, with file:line (exit status 2)", async () => {
    const dir = await project(`tests:
  - name: unknown flag
    flag: nope
    expect: { reason: STATIC }
  - name: fine
    flag: static
    expect: { variant: x }
`);
    await dir.write("flags/broken.test.yaml", "tests:\n  - name: [unclosed\n");
    await dir.write("flags/staging.test.yaml", "tests:\n  - name: x\n    flag: static\n    expect: { variant: x }\n");
    await dir.write("flags/other.test.yaml", "# checks\nenvironment: production\ntests: []\n");
    await dir.write(
      "flags/shape.test.yaml",
      "environment: development\ntests:\n  - name: both\n    flag: a\n    flags: [b]\n    expect: {}\n    extra: 1\n",
    );
    const report = await testFlags({ sources: [dir.file("flags")] });
    const lines = report.problems.map((p) => `${p.file.slice(dir.path.length + 1)}:${p.line} ${p.message}`);
    expect(lines).toContainEqual("flags/broken.test.yaml:2 this `[` is never closed with `]`");
    expect(lines).toContain("flags/development.test.yaml:3 case \"unknown flag\": unknown flag 'nope' in environment 'development'");
    expect(lines).toContain("flags/staging.test.yaml:1 unknown environment 'staging' (known: development)");
    expect(lines).toContain("flags/other.test.yaml:2 unknown environment 'production' (known: development)");
    expect(lines).toContain('flags/shape.test.yaml:3 tests[0]: give either `flag` (one key) or `flags` (a list, or "*" for all)');
    expect(lines).toContain(
      "flags/shape.test.yaml:7 tests[0]: unknown property 'extra' (expected name, flag, flags, context, contexts, now, expect)",
    );
    expect(lines).toContain("flags/shape.test.yaml:6 tests[0].expect: must not be empty");
    expect(report.passed).toBe(1);
    expect(testExitCode(report)).toBe(2);
    // validate reports the same problems
    const load = await loadConfig(dir.file("flags"));
    expect((await checkTestFiles([dir.file("flags")], load)).length).toBe(report.problems.length);
  });

  it("a test file beside a file SOURCE is found; one beside a multi-environment file names its environment", async () => {
    const dir = await tempDir();
    await dir.write("all.yaml", `environments:\n  dev:\n${FLAGS.replace(/^/gm, "    ")}`);
    await dir.write("all.test.yaml", "environment: dev\ntests:\n  - { name: s, flag: static, expect: { value: X, reason: STATIC } }\n");
    const report = await testFlags({ sources: [dir.file("all.yaml")] });
    expect(report.files).toEqual([dir.file("all.test.yaml")]);
    expect(report.passed).toBe(1);
    const bare = await tempDir();
    await bare.write("flags/dev.yaml", FLAGS);
    await bare.mkdir("checks");
    for (const options of [{}, { tests: [bare.file("checks")] }]) {
      const none = await testFlags({ sources: [bare.file("flags")], ...options });
      expect(none.problems.map((p) => p.message)).toEqual([
        "no test files found (expected <environment>.test.yaml beside the flag files, or --tests PATH)",
      ]);
      expect(testExitCode(none)).toBe(2);
    }
    const unnamed = await tempDir();
    await unnamed.write("all.yaml", "environments:\n  dev:\n    flags: {}\n");
    await unnamed.write("all.test.yaml", "tests: []\n");
    expect((await testFlags({ sources: [unnamed.file("all.yaml")] })).problems[0]?.message).toBe("unknown environment 'all' (known: dev)");
    await unnamed.write("all.test.yaml", "# no environment in the name\ntests: []\n");
    expect(
      (await testFlags({ sources: [unnamed.file("all.yaml")], tests: [await unnamed.write("_checks.test.yaml", "tests: []\n")] }))
        .problems[0]?.message,
    ).toBe("which environment? name it with `environment: NAME`, or name the file <environment>.test.yaml");
  });
});

describe("rule coverage", () => {
  it("reports each branch no case reached (if branches, fractional buckets, the default) by file:line", async () => {
    const dir = await project(`tests:
  - name: match
    flag: new-checkout
    context: { email: a@example.com }
    expect: { variant: "on" }
  - name: bucket a
    flag: rollout
    context: { targetingKey: user-1 }
    expect: { reason: SPLIT }
`);
    const report = await testFlags({ sources: [dir.file("flags")], coverage: true });
    expect(report.failed).toBe(0);
    const coverage = report.coverage!;
    const missed = coverage.environments[0]!.flags.flatMap((f) => f.missed.map((b) => `${f.flag}:${b.line} ${b.label}`));
    // new-checkout: if 1 reached; inner if branch, its unwritten else, the outer else and the default not.
    // rollout: one of two buckets reached; its default is not counted (fractional always picks). static: never evaluated.
    const rolled = report.results.find((r) => r.flag === "rollout")!.actual.variant;
    expect(missed).toEqual([
      'new-checkout:4 default ("off")',
      "new-checkout:9 else (none written: null)",
      "new-checkout:9 else (an expression)",
      'new-checkout:11 if branch 1 ("off")',
      rolled === "a" ? 'rollout:18 fractional bucket "b" (weight 50)' : 'rollout:17 fractional bucket "a" (weight 50)',
      "static:21 no targeting: defaultVariant",
    ]);
    expect(coverage).toMatchObject({ branches: 8, reached: 2, percent: 25 });
    expect(humanReport(report, dir.path)).toContain('  not reached: flags/development.yaml:11 new-checkout: if branch 1 ("off")');
    expect(testExitCode(report, 25)).toBe(0);
    expect(testExitCode(report, 26)).toBe(1);
  });

  it("counts only branches a context can reach: no default behind `if ... else fractional`, no bucket of weight 0", async () => {
    const flags = `flags:
  search-algorithm:
    variants: { classic: c, vector: v, hybrid: h }
    defaultVariant: classic
    targeting:
      if:
        - { in: [{ var: country }, [de, fr]] }
        - vector
        - fractional:
            - [classic, 50]
            - [hybrid, 30]
            - [classic, 20]
            - [vector, 0]
`;
    const contexts = Array.from({ length: 30 }, (_, i) => `{ targetingKey: user-${i} }`).join(", ");
    const dir = await project(
      `tests:
  - { name: europe, flag: search-algorithm, context: { country: de }, expect: { variant: vector } }
  - { name: the rest, flag: search-algorithm, contexts: [${contexts}], expect: { reason: SPLIT } }
`,
      flags,
    );
    const report = await testFlags({ sources: [dir.file("flags")], coverage: true });
    expect(report.failed).toBe(0);
    // The if branch, its else, and the two variants the split can pick (classic's two entries are
    // one branch); neither the default nor vector's empty bucket.
    expect(report.coverage).toMatchObject({ branches: 4, reached: 4, percent: 100 });
    expect(report.coverage!.environments[0]!.flags[0]!.missed).toEqual([]);

    // Without the split's cases, what is missed is named as written.
    await dir.write(
      "flags/development.test.yaml",
      "tests:\n  - { name: europe, flag: search-algorithm, context: { country: de }, expect: { variant: vector } }\n",
    );
    const partial = await testFlags({ sources: [dir.file("flags")], coverage: true });
    expect(partial.coverage!.environments[0]!.flags[0]!.missed.map((b) => `${b.line} ${b.label}`)).toEqual([
      "9 else (an expression)",
      '10 fractional bucket "classic" (weights 50, 20)',
      '11 fractional bucket "hybrid" (weight 30)',
    ]);
  });

  it("the default counts when the targeting can answer nothing", () => {
    const split = [
      ["a", 50],
      ["b", 50],
    ];
    // Always a variant (or an error): the default is never reached.
    for (const targeting of [
      "on",
      true,
      { fractional: split },
      { fractional: ["fixed", ...split] },
      { fractional: [{ cat: [{ var: "$flagd.flagKey" }, { var: "email" }] }, ...split] },
      { fractional: [...split, [null, 0]] },
      { if: [{ var: "beta" }, "on", { if: [{ var: "x" }, "a", { fractional: split }] }] },
      { "?:": [{ var: "beta" }, "on", "off"] },
    ])
      expect(alwaysAnswers(targeting), JSON.stringify(targeting)).toBe(true);
    // May answer null: the default counts.
    for (const targeting of [
      null,
      { if: [{ var: "beta" }, "on"] },
      { if: [{ var: "beta" }, null, "off"] },
      { if: [{ var: "beta" }, { var: "variant" }, "off"] },
      { $ref: "beta-testers" },
      { fractional: [{ var: "email" }, ...split] }, // no email and no targetingKey: null
      { fractional: [...split, [null, 10]] },
      { fractional: [["a", 0]] }, // nothing to pick
      { fractional: [["a", { var: "weight" }]] },
      { var: "variant" },
    ])
      expect(alwaysAnswers(targeting), JSON.stringify(targeting)).toBe(false);
  });

  it("a disabled flag has one branch, whatever its targeting says", async () => {
    const dir = await project(
      `tests:\n  - { name: off, flag: new-checkout, expect: { reason: DISABLED } }\n`,
      FLAGS.replace("  new-checkout:\n", "  new-checkout:\n    state: DISABLED\n"),
    );
    const report = await testFlags({ sources: [dir.file("flags")], coverage: true });
    expect(report.coverage!.environments[0]!.flags[0]).toEqual({ flag: "new-checkout", branches: 1, reached: 1, missed: [] });
  });

  it("the instrumented evaluation answers exactly as the server's", async () => {
    const contexts = Array.from(
      { length: 40 },
      (_, i) => `{ targetingKey: u${i}, email: u${i}@example.${i % 3 ? "org" : "com"}, region: ${i % 2 ? "eu" : "us"} }`,
    );
    const dir = await project(
      `tests:\n  - name: all\n    flags: "*"\n    contexts: [${contexts.join(", ")}]\n    expect: { errorCode: null }\n`,
    );
    const plain = await testFlags({ sources: [dir.file("flags")] });
    const traced = await testFlags({ sources: [dir.file("flags")], coverage: true });
    expect(traced.results.map((r) => r.actual)).toEqual(plain.results.map((r) => r.actual));
    expect(plain.results).toHaveLength(120);
    expect(traced.coverage).toMatchObject({ branches: 8, reached: 8, percent: 100 });
  });
});

describe("flagserve test, the real CLI", () => {
  it("exit 0 when all pass, 1 on a failure with a JUnit file, 2 for a missing path", async () => {
    const dir = await project(`tests:
  - name: static answers X
    flag: static
    expect: { value: X, reason: STATIC }
`);
    const ok = await run(["test", "flags", "--coverage"], { cwd: dir.path });
    expect(ok.stdout).toContain("ok: 1 of 1 check passed\ncoverage: 12.5% of targeting branches reached (1 of 8)\n");
    expect(ok.stdout).toContain('  not reached: flags/development.yaml:8 new-checkout: if branch 1 ("on")\n');
    expect(ok.code).toBe(0);

    await dir.write("flags/development.test.yaml", 'tests:\n  - name: <wrong> & "quoted"\n    flag: static\n    expect: { value: Y }\n');
    const failed = await run(["test", "--reporter", "junit", "--output", "report.xml"], { cwd: dir.path });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("FAILED: 0 of 1 check passed, 1 failed; report in report.xml");
    const junit = await readFile(dir.file("report.xml"), "utf8");
    expect(junit).toContain(
      '<testcase name="&lt;wrong&gt; &amp; &quot;quoted&quot; [static]" classname="development.static" file="flags/development.test.yaml" line="2">',
    );
    expect(junit).toContain(
      '<failure message="expected value &quot;Y&quot;; got variant &quot;x&quot;, value &quot;X&quot;, reason STATIC" type="mismatch">',
    );

    const missing = await run(["test", "nowhere"], { cwd: dir.path });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("flagserve test: nowhere: path does not exist\n");
  });
});

describe("junit", () => {
  it("is one testsuite per file and an errors suite for problems", () => {
    const xml = junitReport(
      {
        passed: 0,
        failed: 0,
        results: [],
        configProblems: [],
        problems: [{ file: "/x/a.test.yaml", line: 3, col: 1, message: "bad <thing>" }],
      },
      "/x",
    );
    expect(xml).toContain('<testsuites name="flagserve test" tests="1" failures="0" errors="1">');
    expect(xml).toContain('<error message="bad &lt;thing&gt;"/>');
  });
});

describe("the test files' schema", () => {
  it("src/testing/generated/schema-validators.ts is what scripts/schema-validators.ts writes (npm run generate:validators)", () => {
    expect(readFileSync(TEST_VALIDATORS_FILE, "utf8") === testValidatorsSource(), "run npm run generate:validators").toBe(true);
  });

  it("accepts the starter test file and answers as ajv compiling the schema at run time", () => {
    const atRunTime = schemaAjv(false, TEST_SCHEMA_FILE).getSchema("flagserve")!;
    const starter = parse(developmentTestFile("x")) as unknown;
    expect(atRunTime(starter)).toBe(true);
    expect(parseTestFile("/x/development.test.yaml", developmentTestFile("x")).problems).toEqual([]);
    const bad = { tests: [{ name: "x", expect: { reason: "MAYBE", errorCode: 5 } }] };
    expect(atRunTime(bad)).toBe(false);
    expect(
      parseTestFile("/x/development.test.yaml", JSON.stringify(bad))
        .problems.map((p) => p.message)
        .sort(),
    ).toEqual([
      "tests[0].expect.errorCode: must be one of TARGETING_KEY_MISSING, PARSE_ERROR, GENERAL, INVALID_CONTEXT, FLAG_NOT_FOUND, null",
      "tests[0].expect.reason: must be one of STATIC, TARGETING_MATCH, SPLIT, DEFAULT, DISABLED",
      'tests[0]: give either `flag` (one key) or `flags` (a list, or "*" for all)',
    ]);
  });
});
