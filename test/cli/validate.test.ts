/** `flagserve validate`: the pre-commit / CI lint, run in-process (runCli). */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { OFREP_FIXTURE } from "../helpers/fixtures.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const EXAMPLE = fileURLToPath(new URL("../../flags.example.yaml", import.meta.url));
const t = cleanupAfterEach();

const BAD = `flags:\n  f:\n    state: MAYBE\n    variants: { a: 1 }\n    defaultVariant: b\n`;

describe("flagserve validate", () => {
  it("passes the bundled example: exit 0, one summary line on stdout, nothing on stderr", async () => {
    const { code, stdout, stderr } = await runHere(["validate", EXAMPLE]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout.trim().split("\n")).toHaveLength(1);
    expect(stdout).toMatch(/^ok: .*2 valid environments: development \(5 flags\), production \(5 flags\)$/m);
  });

  it("validates ./flags by default, else the bundled example", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const here = await runHere(["validate"], { cwd: dir.path });
    expect(here.code).toBe(0);
    expect(here.stdout).toContain("ok: flags has 1 valid environment: test (11 flags)");
    const empty = await t.dir();
    const bundled = await runHere(["validate"], { cwd: empty.path });
    expect(bundled.code).toBe(0);
    expect(bundled.stdout).toContain("development (5 flags)");
  });

  it("a file of 50 000 compact nested lists (`- - -`, 100 KB), as flags or as tests: a problem at its line, no stack trace", async () => {
    const deep = `${"- ".repeat(50_000)}x\n`;
    const dir = await t.dir({
      "flags/good.yaml": OFREP_FIXTURE,
      "flags/deep.yaml": `flags:\n  f:\n    variants:\n      a:\n        ${deep}`,
      "flags/good.test.yaml": `tests:\n${deep}`,
    });
    const message = "the document is nested deeper than 128 levels of mappings and lists; no flag configuration needs that";
    // The root, flags, f and variants are four levels, the 125th `- ` opens the 129th; in the test
    // file the root and `tests` are two, and the 128th `- ` opens it.
    const flags = `flags/deep.yaml:5:${8 + 2 * 124 + 1} ${message}`;
    const tests = `flags/good.test.yaml:2:${2 * 127 + 1} ${message}`;
    const validate = await run(["validate", "flags"], { cwd: dir.path });
    expect(validate.stderr).not.toMatch(/RangeError|Maximum call stack|\n\s+at /);
    expect(validate.stderr).toContain(flags);
    expect(validate.stderr).toContain(tests);
    expect(validate.code).toBe(1);
    const test = await run(["test", "flags"], { cwd: dir.path });
    const output = test.stdout + test.stderr;
    expect(output).not.toMatch(/RangeError|Maximum call stack|\n\s+at /);
    expect(output).toContain(tests);
    expect(test.code).toBe(2);
  });

  it("reports every problem as file:line:col on stderr and exits 1", async () => {
    const dir = await t.dir({ "flags/good.yaml": OFREP_FIXTURE, "flags/bad.yaml": BAD, "flags/broken.yaml": "flags: [" });
    const { code, stdout, stderr } = await runHere(["validate", "flags"], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toEqual([
      "flags/bad.yaml:3:12 flags.f.state: must be one of ENABLED, DISABLED",
      "flags/bad.yaml:5:21 defaultVariant 'b' is not one of the variants ('a')",
      "flags/broken.yaml:1:8 this `[` is never closed with `]`",
      "3 problems in 2 files (invalid: bad, broken)",
    ]);
  });

  it("shows absolute paths for files outside the working directory", async () => {
    const dir = await t.dir({ "bad.yaml": BAD });
    const { code, stderr } = await runHere(["validate", dir.file("bad.yaml")]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${dir.file("bad.yaml")}:3:12 `);
  });

  it("--format json: {valid, path, sources, environments, problems} on stdout", async () => {
    const dir = await t.dir({ "flags/good.yaml": OFREP_FIXTURE, "flags/bad.yaml": BAD });
    const bad = await runHere(["validate", dir.file("flags"), "--format", "json"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe("");
    const report = JSON.parse(bad.stdout);
    expect(report).toEqual({
      valid: false,
      path: dir.file("flags"),
      sources: [dir.file("flags")],
      environments: [
        { name: "bad", valid: false, files: [dir.file("flags/bad.yaml")] },
        {
          name: "good",
          valid: true,
          files: [dir.file("flags/good.yaml")],
          flags: expect.arrayContaining(["bool-flag", "split-flag"]),
          segments: ["premium"],
        },
      ],
      problems: [
        { file: dir.file("flags/bad.yaml"), line: 3, col: 12, message: "flags.f.state: must be one of ENABLED, DISABLED" },
        { file: dir.file("flags/bad.yaml"), line: 5, col: 21, message: "defaultVariant 'b' is not one of the variants ('a')" },
      ],
    });

    const good = await runHere(["validate", EXAMPLE, "--format", "json"]);
    expect(good.code).toBe(0);
    const ok = JSON.parse(good.stdout);
    expect(ok.valid).toBe(true);
    expect(ok.problems).toEqual([]);
    expect(ok.environments.map((e: { name: string }) => e.name)).toEqual(["development", "production"]);
    expect(ok.environments[0].flags).toContain("new-checkout");
  });

  it("fails on a missing path and on a directory without environments", async () => {
    const dir = await t.dir();
    const missing = await runHere(["validate", dir.file("nope")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`${dir.file("nope")}: path does not exist`);
    expect(missing.stderr).not.toContain(":0:0");
    const json = await runHere(["validate", dir.file("nope"), "--format", "json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, problems: [{ file: dir.file("nope"), message: "path does not exist" }] });
    const empty = await runHere(["validate", dir.path]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("no environments found");
  });

  it("catches what only the server's later stages see: unresolved $ref, duplicate keys across environments", async () => {
    const dir = await t.dir({
      "flags/a.yaml": `apiKey: same-key-123\nflags:\n  f:\n    variants: { x: 1 }\n    defaultVariant: x\n    targeting: { if: [{ $ref: nope }, x, null] }\n`,
      "flags/b.yaml": `apiKey: same-key-123\nflags: {}\n`,
    });
    const { code, stderr } = await runHere(["validate", "flags"], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^flags\/a\.yaml:6:\d+ .*nope/m);
    expect(stderr).toMatch(/^flags\/b\.yaml:1:1 apiKey is also used by environment 'a'/m);
  });
});

/** The CommonJS files of packages a real `flagserve validate FILE` run loaded, as paths under node_modules. */
async function packagesLoadedBy(file: string): Promise<{ stdout: string; loaded: string[] }> {
  const main = new URL("../../dist/cli/main.js", import.meta.url).href;
  const script = `import { createRequire } from "node:module";
    const { main } = await import(${JSON.stringify(main)});
    await main(["node", "flagserve", "validate", process.argv[1]]);
    process.stderr.write("LOADED " + JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script, file]).catch(
    (e: { stdout: string; stderr: string }) => e,
  );
  const loaded = JSON.parse(/LOADED (.*)$/m.exec(stderr)![1]!) as string[];
  return { stdout, loaded: loaded.map((path) => /node_modules\/(.*)$/.exec(path)?.[1] ?? path) };
}

describe("flagserve validate loads what it uses", () => {
  it("a plain file: neither the yaml package nor ajv's schema compiler", async () => {
    const dir = await t.dir({ "flags.yaml": OFREP_FIXTURE });
    const { stdout, loaded } = await packagesLoadedBy(dir.file("flags.yaml"));
    expect(stdout).toContain("1 valid environment");
    expect(loaded).toContain("commander/index.js"); // the analysis sees CommonJS packages
    // ajv's runtime helpers for the validators compiled ahead of time, nothing else of it.
    expect(loaded.filter((p) => p.startsWith("yaml/") || (p.startsWith("ajv/") && !p.startsWith("ajv/dist/runtime/")))).toEqual([]);
  });

  it("a file with a problem: the yaml package, to locate it", async () => {
    const dir = await t.dir({ "flags.yaml": BAD });
    const { loaded } = await packagesLoadedBy(dir.file("flags.yaml"));
    expect(loaded).toContain("yaml/dist/index.js");
  });
});
