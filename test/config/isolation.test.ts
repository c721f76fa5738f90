/**
 * A problem costs only what it breaks (see docs/format.md): a problem inside one flag takes out that flag,
 * a problem inside one segment the flags that use it, and only problems outside flags and
 * segments take out the environment. Every problem is reported in one run either way.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { evaluate } from "../../src/engine/evaluate.js";
import { lines, problemLines, useTempDir } from "./helpers.js";

const tmp = useTempDir();

const MIXED = lines(
  "apiKey: isolation-key-123",
  "segments:",
  "  good-seg: { ends_with: [{ var: email }, '@example.com'] }",
  "  bad-seg: { nope: [1] }",
  "flags:",
  "  ok:",
  "    variants: { 'on': true, 'off': false }",
  "    defaultVariant: 'on'",
  "  typo:",
  "    state: enabled",
  "    variants: { 'on': true }",
  "    defaultVariant: missing",
  "  unknown-op:",
  "    variants: { 'on': true, 'off': false }",
  "    defaultVariant: 'off'",
  "    targeting: { if: [{ invalid: [1] }, 'on', null] }",
  "  mixed:",
  "    variants: { a: 1, b: 'two' }",
  "    defaultVariant: a",
  "  missing-ref:",
  "    variants: { 'on': true, 'off': false }",
  "    defaultVariant: 'off'",
  "    targeting: { if: [{ $ref: nowhere }, 'on', null] }",
  "  uses-bad-seg:",
  "    variants: { 'on': true, 'off': false }",
  "    defaultVariant: 'off'",
  "    targeting: { if: [{ $ref: bad-seg }, 'on', null] }",
  "  uses-good-seg:",
  "    variants: { 'on': true, 'off': false }",
  "    defaultVariant: 'off'",
  "    targeting: { if: [{ $ref: good-seg }, 'on', null] }",
);

describe("a problem costs only what it breaks", () => {
  it("reports every problem of every flag in one run, and loads the environment without the broken flags", async () => {
    const file = await tmp.write("dev.yaml", MIXED);
    const load = await loadConfig(file);

    expect(problemLines(load, tmp.path)).toEqual([
      '<dir>/dev.yaml:4:14 unknown operator "nope" (did you mean "none"?)',
      "<dir>/dev.yaml:10:12 flags.typo.state: must be one of ENABLED, DISABLED",
      "<dir>/dev.yaml:12:21 defaultVariant 'missing' is not one of the variants ('on')",
      '<dir>/dev.yaml:16:25 unknown operator "invalid"',
      "<dir>/dev.yaml:18:26 variant 'b' is a string but variant 'a' is a number: all variants of a flag must have the same type",
      '<dir>/dev.yaml:23:31 unknown segment "nowhere" in $ref (defined: good-seg, bad-seg)',
    ]);
    const dev = load.environments.get("dev")!;
    expect(dev).toBeDefined();
    expect(Object.keys(dev.config.flags)).toEqual(["ok", "uses-good-seg"]);
    expect(Object.keys(dev.config.invalidFlags ?? {}).sort()).toEqual(["missing-ref", "mixed", "typo", "unknown-op", "uses-bad-seg"]);

    // the broken flags answer PARSE_ERROR with what is wrong; the others evaluate as written
    for (const key of Object.keys(dev.config.invalidFlags ?? {})) {
      expect(evaluate(dev.flags.get(key)!, {})).toMatchObject({ key, errorCode: "PARSE_ERROR" });
    }
    expect(evaluate(dev.flags.get("typo")!, {})).toMatchObject({ errorDetails: expect.stringContaining("flags.typo.state") });
    expect(evaluate(dev.flags.get("uses-bad-seg")!, {})).toMatchObject({
      errorDetails: expect.stringContaining('segment "bad-seg" is invalid'),
    });
    expect(evaluate(dev.flags.get("ok")!, {})).toMatchObject({ value: true, reason: "STATIC" });
    expect(evaluate(dev.flags.get("uses-good-seg")!, { email: "a@example.com" })).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
  });

  it("a problem outside flags and segments takes out the environment, and the flags are still checked", async () => {
    const file = await tmp.write("dev.yaml", `${MIXED}\ncolour: red\nmetadata: { team: [a] }\n`);
    const load = await loadConfig(file);
    expect(load.environments.size).toBe(0);
    const problems = problemLines(load, tmp.path);
    expect(problems).toContain(
      "<dir>/dev.yaml:33:1 unknown property 'colour' (expected $schema, apiKey, metadata, segments, $evaluators, flags, notifications)",
    );
    expect(problems).toContainEqual(expect.stringMatching(/^<dir>\/dev\.yaml:34:\d+ metadata\.team: must be a string, number or boolean$/));
    // ...and the flag problems are not hidden by them
    expect(problems).toContain('<dir>/dev.yaml:16:25 unknown operator "invalid"');
    expect(problems).toContain('<dir>/dev.yaml:23:31 unknown segment "nowhere" in $ref (defined: good-seg, bad-seg)');
    expect(problems).toContain("<dir>/dev.yaml:10:12 flags.typo.state: must be one of ENABLED, DISABLED");
    expect(problems).toHaveLength(8);
  });

  it("a flag defined in two files of one environment is out, the rest is served", async () => {
    await tmp.write(
      "web/a.yaml",
      lines("flags:", "  twice: { variants: { x: 1 }, defaultVariant: x }", "  once: { variants: { y: 2 }, defaultVariant: y }"),
    );
    await tmp.write("web/b.yaml", lines("flags:", "  twice: { variants: { x: 3 }, defaultVariant: x }"));
    const load = await loadConfig(tmp.path);
    expect(problemLines(load, tmp.path)).toEqual(["<dir>/web/b.yaml:2:3 flag 'twice' is also defined in <dir>/web/a.yaml:2:3"]);
    const web = load.environments.get("web")!;
    expect(Object.keys(web.config.flags)).toEqual(["once"]);
    expect(evaluate(web.flags.get("twice")!, {})).toMatchObject({ errorCode: "PARSE_ERROR" });
  });

  it("flagd's list form: a flag is named by its key; a list item without one takes out the environment", async () => {
    const named = await tmp.write(
      "named.yaml",
      lines(
        "flags:",
        "  - { key: good, state: ENABLED, variants: { x: 1 }, defaultVariant: x }",
        "  - { key: bad, state: nope, variants: { x: 1 } }",
      ),
    );
    const load = await loadConfig(named);
    expect(Object.keys(load.environments.get("named")!.config.invalidFlags ?? {})).toEqual(["bad"]);
    expect(Object.keys(load.environments.get("named")!.config.flags)).toEqual(["good"]);

    const unnamed = await tmp.write("unnamed.yaml", lines("flags:", "  - { state: ENABLED, variants: { x: 1 } }"));
    expect((await loadConfig(unnamed)).environments.size).toBe(0);
  });
});
