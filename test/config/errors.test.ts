/** Every problem is reported as file:line:col, pointing at the offending key or value. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { lines, problemLines, useTempDir } from "./helpers.js";

describe("problems are located at file:line:col", () => {
  const tmp = useTempDir();

  const problemsOf = async (name: string, text: string): Promise<string[]> => {
    const file = await tmp.write(name, text);
    const load = await loadConfig(file);
    expect(load.problems.size).toBeGreaterThan(0); // (whether it takes out a flag or the environment: isolation.test.ts)
    return problemLines(load, tmp.path);
  };

  it("YAML syntax error: an unclosed flow mapping, at the `{` that opened it", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants: { on: true", "    defaultVariant: on"))).toEqual([
      "<dir>/dev.yaml:3:15 this `{` is never closed with `}`",
    ]);
  });

  it("a second YAML document, at the `---` that starts it (a `---` before the first is fine)", async () => {
    expect(await problemsOf("dev.yaml", lines("---", "flags: {}", "---", "flags:", "  a: { variants: { on: true } }"))).toEqual([
      "<dir>/dev.yaml:3:1 a second YAML document starts here: a flag file holds one document",
    ]);
  });

  // One misplaced line used to give several errors, at column 1 or at the line above it.
  const FLAG = [
    "flags:",
    "  new-checkout:",
    "    state: ENABLED",
    "    variants:",
    "      on: true",
    "      off: false",
    "    defaultVariant: off",
  ];
  const withLine = (index: number, text: string): string => lines(...FLAG.map((line, i) => (i === index ? text : line)));

  it.each([
    {
      what: "a line indented less than its neighbours",
      text: withLine(5, "     off: false"),
      problem:
        "<dir>/dev.yaml:6:6 this line is indented by 5 spaces, which matches no line above it: indent it by 6 spaces like line 5 (`on: true`), or by 4 spaces like line 4 (`variants:`)",
    },
    {
      what: "a key indented between two levels",
      text: withLine(6, "   defaultVariant: off"),
      problem:
        "<dir>/dev.yaml:7:4 this line is indented by 3 spaces, which matches no line above it: indent it by 4 spaces like line 4 (`variants:`), or by 2 spaces like line 2 (`new-checkout:`)",
    },
    {
      what: "a line indented more than the line above, which has a value",
      text: withLine(5, "        off: false"),
      problem:
        "<dir>/dev.yaml:6:9 this line is indented more than line 5 (`on: true`), which already has a value: indent it by 6 spaces like line 5, or remove the value of line 5",
    },
    {
      what: "a key indented under a key that has a value",
      text: withLine(3, "     variants:"),
      problem:
        "<dir>/dev.yaml:4:6 this line is indented more than line 3 (`state: ENABLED`), which already has a value: indent it by 4 spaces like line 3, or remove the value of line 3",
    },
    {
      what: "a tab in the indentation",
      text: withLine(6, "\tdefaultVariant: off"),
      problem: "<dir>/dev.yaml:7:1 this line is indented with a tab; YAML indents with spaces only",
    },
  ])("YAML indentation: $what -> one problem, at the line that is wrong", async ({ text, problem }) => {
    expect(await problemsOf("dev.yaml", text)).toEqual([problem]);
  });

  const FLAG_WITH_DESCRIPTION = [
    "flags:",
    "  a:",
    "    variants: { on: true }",
    "    defaultVariant: on",
    "    metadata:",
    "      description: |",
  ];
  it.each([
    {
      what: "an unclosed `[` (yaml notices at the next line)",
      text: lines("flags:", "  a:", "    variants: { on: true, off: false }", "    targeting: [1, 2", "    defaultVariant: on"),
      problem: "<dir>/dev.yaml:4:16 this `[` is never closed with `]`",
    },
    {
      what: "an unclosed `{` around brackets that are closed",
      text: lines(
        "flags:",
        "  a:",
        "    variants: { on: true, off: false }",
        "    targeting: { if: [{ var: email }, on, off]",
        "    defaultVariant: on",
      ),
      problem: "<dir>/dev.yaml:4:16 this `{` is never closed with `}`",
    },
    {
      what: "a line after a comment (yaml reports the comment's line)",
      text: lines(...FLAG.slice(0, 2), "      state: ENABLED", "    # both variants, on and off", ...FLAG.slice(3)),
      problem:
        "<dir>/dev.yaml:5:5 this line is indented by 4 spaces, which matches no line above it: indent it by 6 spaces like line 3 (`state: ENABLED`), or by 2 spaces like line 2 (`new-checkout:`)",
    },
    {
      what: "a line of a block scalar's text indented less than its first",
      text: lines(...FLAG_WITH_DESCRIPTION, "        Turns the new", "       checkout on"),
      problem:
        "<dir>/dev.yaml:8:8 this line is indented by 7 spaces, which matches no line above it: indent it by 8 spaces like line 7 (`Turns the new`), or by 6 spaces like line 6 (`description: |`)",
    },
    {
      what: "a tab in a block scalar's text",
      text: lines(...FLAG_WITH_DESCRIPTION, "        Turns the new", "\tcheckout on"),
      problem: "<dir>/dev.yaml:8:1 this line is indented with a tab; YAML indents with spaces only",
    },
    {
      what: "a line indented more than a list item's `key: value` (indent it like the key, not the `-`)",
      text: lines("notifications:", "  - type: webhook", "      url: https://example.com/hook", "flags: {}"),
      problem:
        "<dir>/dev.yaml:3:7 this line is indented more than line 2 (`- type: webhook`), which already has a value: indent it by 4 spaces like line 2, or remove the value of line 2",
    },
  ])("YAML syntax: $what -> at the line or bracket that is wrong", async ({ text, problem }) => {
    expect(await problemsOf("dev.yaml", text)).toEqual([problem]);
  });

  it("an unknown operator, with the operator it was probably meant to be", async () => {
    const text = lines(
      "flags:",
      "  a:",
      "    variants: { on: true, off: false }",
      "    targeting: { if: [{ start_with: [{ var: email }, a] }, on, off] }",
    );
    expect(await problemsOf("dev.yaml", text)).toEqual(['<dir>/dev.yaml:4:25 unknown operator "start_with" (did you mean "starts_with"?)']);
  });

  it("duplicate YAML key", async () => {
    expect(
      await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants: { on: true }", "  a:", "    variants: { off: false }")),
    ).toEqual(["<dir>/dev.yaml:4:3 duplicate key 'a'"]);
  });

  it("duplicate key in a JSON file", async () => {
    expect(await problemsOf("dev.json", '{\n  "flags": {},\n  "flags": {}\n}\n')).toEqual(["<dir>/dev.json:3:3 duplicate key 'flags'"]);
  });

  it("bad state", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a:", "    state: enabled", "    variants: { on: true }"))).toEqual([
      "<dir>/dev.yaml:3:12 flags.a.state: must be one of ENABLED, DISABLED",
    ]);
  });

  it("additional property, at the key", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants: { on: true }", "    defaultVarient: on"))).toEqual([
      "<dir>/dev.yaml:4:5 flags.a: unknown property 'defaultVarient' (expected state, variants, defaultVariant, targeting, metadata)",
    ]);
  });

  it("missing variants, at the flag's key", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a:", "    state: ENABLED"))).toEqual([
      "<dir>/dev.yaml:2:3 flags.a: missing required property 'variants'",
    ]);
  });

  it("mixed variant types, at the first variant of another type", async () => {
    expect(
      await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants:", "      on: true", "      off: 'false'", "      maybe: 1")),
    ).toEqual([
      "<dir>/dev.yaml:5:12 variant 'off' is a string but variant 'on' is a boolean: all variants of a flag must have the same type",
      "<dir>/dev.yaml:6:14 variant 'maybe' is a number but variant 'on' is a boolean: all variants of a flag must have the same type",
    ]);
  });

  it("list and null variants", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants: { x: [1], y: null }"))).toEqual([
      "<dir>/dev.yaml:3:17 variant 'x' is a list: variants must be booleans, strings, numbers or objects",
      "<dir>/dev.yaml:3:28 variant 'y' is null: variants must be booleans, strings, numbers or objects",
    ]);
  });

  it("variants that are not a mapping: one problem, not one per typed-flag branch", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants: true"))).toEqual([
      "<dir>/dev.yaml:3:15 flags.a.variants: must be an object",
    ]);
  });

  it("defaultVariant not among the variants, at the defaultVariant value", async () => {
    expect(
      await problemsOf("dev.yaml", lines("flags:", "  a:", "    variants: { on: true, off: false }", "    defaultVariant: of")),
    ).toEqual(["<dir>/dev.yaml:4:21 defaultVariant 'of' is not one of the variants ('on', 'off')"]);
  });

  it("a defaultVariant that is not a name: it must name a variant (a boolean or number is not one)", async () => {
    const flag = (dv: string) => lines("flags:", "  a:", "    variants: { on: true, off: false }", `    defaultVariant: ${dv}`);
    expect(await problemsOf("dev.yaml", flag("false"))).toEqual([
      `<dir>/dev.yaml:4:21 flags.a.defaultVariant: must name one of the variants ('on', 'off'), or be null; this is boolean false (quote it, "false", if a variant is named so)`,
    ]);
    expect(await problemsOf("dev.yaml", flag("[on]"))).toEqual([
      "<dir>/dev.yaml:4:5 flags.a.defaultVariant: must name one of the variants ('on', 'off'), or be null; this is a list",
    ]);
  });

  it("a flag named like a flag's field (indented too little): asks so, and the flag above it is not served without that field", async () => {
    const file = await tmp.write(
      "dev.yaml",
      lines(
        "flags:",
        "  new-checkout:",
        "    variants: { on: true, off: false }",
        "    defaultVariant: 'off'",
        "  targeting:", // meant four spaces in, under new-checkout
        "    if: [{ ends_with: [{ var: email }, '@example.com'] }, 'on', 'off']",
        "  other:",
        "    variants: { on: true }",
        "    defaultVariant: 'on'",
      ),
    );
    const load = await loadConfig(file);
    expect(problemLines(load, tmp.path)).toEqual([
      "<dir>/dev.yaml:5:3 flags.targeting: 'targeting' is a flag's field, not a flag name: is it indented too little? As written it is a flag of its own, and flag 'new-checkout' above it has no targeting",
    ]);
    // Neither is served as written (new-checkout would answer without its targeting); the others are.
    const dev = load.environments.get("dev")!;
    expect(Object.keys(dev.config.invalidFlags ?? {}).sort()).toEqual(["new-checkout", "targeting"]);
    expect(Object.keys(dev.config.flags)).toEqual(["other"]);
  });

  it("unresolved $ref, at the $ref value", async () => {
    const problems = await problemsOf(
      "dev.yaml",
      lines(
        "segments:",
        "  beta: { in: [{ var: email }, [a@x.io]] }",
        "flags:",
        "  new-ui:",
        "    variants: { on: true, off: false }",
        "    defaultVariant: off",
        "    targeting:",
        "      if: [{ $ref: betta }, on, null]",
      ),
    );
    expect(problems).toEqual([expect.stringMatching(/^<dir>\/dev\.yaml:8:20 .*betta/)]);
  });

  it("unknown operator, at the operator", async () => {
    const problems = await problemsOf(
      "dev.yaml",
      lines("flags:", "  a:", "    variants: { on: true }", "    targeting:", "      if: [{ starts_wth: [{ var: id }, ab] }, on, null]"),
    );
    expect(problems).toEqual([expect.stringMatching(/^<dir>\/dev\.yaml:5:14 .*starts_wth/)]);
  });

  it("engine errors land in the file of a merged directory that wrote them", async () => {
    await tmp.write(
      "web/flags.yaml",
      lines("flags:", "  a:", "    variants: { on: true }", "    targeting: { if: [{ $ref: s1 }, on, null] }"),
    );
    await tmp.write("web/segments.yaml", lines("$evaluators:", "  s1: { $ref: s2 }", "  s2: { $ref: nope }"));

    const load = await loadConfig(tmp.path);

    const problems = problemLines(load, tmp.path, "web");
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.startsWith("<dir>/web/segments.yaml:3:"))).toBe(true);
    expect(problems.join("\n")).toMatch(/nope/);
  });

  it("empty and whitespace-only files", async () => {
    expect(await problemsOf("a.yaml", "")).toEqual(["<dir>/a.yaml:1:1 file is empty"]);
    expect(await problemsOf("b.yaml", "  \n\n\t\n")).toEqual(["<dir>/b.yaml:1:1 file is empty"]);
    expect(await problemsOf("c.yaml", "# only a comment\n")).toEqual(["<dir>/c.yaml:1:1 file is empty"]);
    expect(await problemsOf("d.yaml", "---\n")).toEqual(["<dir>/d.yaml:1:1 file is empty"]);
    expect(await problemsOf("e.json", "")).toEqual(["<dir>/e.json:1:1 file is empty"]);
  });

  it("a document that is not a mapping", async () => {
    expect(await problemsOf("dev.yaml", "- a\n- b\n")).toEqual(["<dir>/dev.yaml:1:1 must be an object"]);
  });

  it("several errors in one file are all reported, sorted by position", async () => {
    const problems = await problemsOf(
      "dev.yaml",
      lines(
        "apiKey: short", //                                      1
        "flags:", //                                             2
        "  a:", //                                               3
        "    state: on", //                                      4
        "    variants: { on: true, off: 0 }", //                 5
        "    defaultVariant: nope", //                           6
        "  b:", //                                               7
        "    variants: {}", //                                   8
        "notifications:", //                                     9
        "  - { type: teams, url: 'https://x.example' }", //      10
        "colour: red", //                                        11
      ),
    );
    expect(problems).toEqual([
      "<dir>/dev.yaml:1:9 apiKey: must be at least 8 characters long",
      "<dir>/dev.yaml:4:12 flags.a.state: must be one of ENABLED, DISABLED",
      "<dir>/dev.yaml:5:32 variant 'off' is a number but variant 'on' is a boolean: all variants of a flag must have the same type",
      "<dir>/dev.yaml:6:21 defaultVariant 'nope' is not one of the variants ('on', 'off')",
      "<dir>/dev.yaml:8:5 flags.b.variants: must have at least one variant",
      "<dir>/dev.yaml:10:13 notifications[0].type: must be one of slack, webhook",
      "<dir>/dev.yaml:11:1 unknown property 'colour' (expected $schema, apiKey, metadata, segments, $evaluators, flags, notifications)",
    ]);
  });

  it("every file of a directory is checked, and every problem reported at once", async () => {
    await tmp.write("a.yaml", "flags: [\n");
    await tmp.write("b.yaml", "");
    await tmp.write("c/one.yaml", lines("flags:", "  x: { variants: { on: true }, state: no }"));
    await tmp.write("c/two.yaml", lines("flags:", "  y: { variants: { on: true }, defaultVariant: off }"));

    const load = await loadConfig(tmp.path);

    // a and b do not parse; c's problems are confined to its flags x and y, which alone are out
    expect([...load.environments.keys()]).toEqual(["c"]);
    expect(Object.keys(load.environments.get("c")!.config.invalidFlags ?? {})).toEqual(["x", "y"]);
    expect([...load.problems.keys()]).toEqual(["a", "b", "c"]);
    expect(problemLines(load, tmp.path, "c")).toEqual([
      "<dir>/c/one.yaml:2:39 flags.x.state: must be one of ENABLED, DISABLED",
      "<dir>/c/two.yaml:2:48 defaultVariant 'off' is not one of the variants ('on')",
    ]);
  });

  it("an apiKey with spaces explains the rule", async () => {
    expect(await problemsOf("dev.yaml", lines("apiKey: has a space", "flags: {}"))).toEqual([
      "<dir>/dev.yaml:1:9 apiKey: an API key is sent in an HTTP header: visible ASCII characters only, no spaces",
    ]);
  });

  it("metadata values must be primitives", async () => {
    expect(await problemsOf("dev.yaml", lines("metadata:", "  team: [a, b]", "flags: {}"))).toEqual([
      "<dir>/dev.yaml:2:3 metadata.team: must be a string, number or boolean",
    ]);
  });

  it("'environments' in a directory's file says where it belongs", async () => {
    await tmp.write("dev.yaml", lines("environments:", "  x: { flags: {} }"));
    const load = await loadConfig(tmp.path);
    expect(problemLines(load, tmp.path)).toEqual([
      "<dir>/dev.yaml:1:1 unknown property 'environments' ('environments' is only allowed in a single file given as PATH)",
      "<dir>/dev.yaml:1:1 missing 'flags' (write `flags: {}` for an environment without flags)",
    ]);
  });

  it(".inf and .nan are refused (JSON cannot carry them)", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a: { variants: { x: 1 }, targeting: { '>': [{ var: n }, .inf] } }"))).toEqual([
      '<dir>/dev.yaml:2:59 flags.a.targeting[">"][1]: must be a finite number (.inf and .nan have no JSON form)',
    ]);
  });

  it("a byte-order mark does not shift columns", async () => {
    expect(await problemsOf("dev.yaml", "\uFEFFflags:\n  a: { variants: { on: true }, state: x }\n")).toEqual([
      "<dir>/dev.yaml:2:39 flags.a.state: must be one of ENABLED, DISABLED",
    ]);
  });

  it("alias bombs and self-referencing aliases are refused", async () => {
    // Nine times nine... six levels deep: 531 441 values once expanded, from 260 characters.
    const bomb = lines(
      "a: &a [x, x, x, x, x, x, x, x, x]",
      ...["b", "c", "d", "e", "f"].map((name, i) => `${name}: &${name} [${Array(9).fill(`*${"abcde"[i]}`).join(", ")}]`),
      "flags: { f: { variants: { v: { x: *f } } } }",
    );
    expect(await problemsOf("bomb.yaml", bomb)).toEqual([
      `<dir>/bomb.yaml:1:1 YAML aliases expand the document to more than ${bomb.length + 100_000} values; write the repeated parts out`,
    ]);
    // Aliases that add fewer values than that are read as written.
    const few = await loadConfig(
      await tmp.write("few.yaml", lines("flags:", "  f: { variants: { v: &a { x: [1, 2] }, w: *a }, defaultVariant: w }")),
    );
    expect(few.problems.size).toBe(0);
    expect(few.environments.get("few")!.config.flags.f!.variants.w).toEqual({ x: [1, 2] });
    expect(await problemsOf("loop.yaml", lines("flags:", "  a: &x { variants: { v: { self: *x } } }"))).toEqual([
      "<dir>/loop.yaml:2:34 YAML alias refers to a node that contains it",
    ]);
  });

  it("unresolved YAML tags are errors, not silently strings", async () => {
    expect(await problemsOf("dev.yaml", lines("flags:", "  a: { variants: { x: !secret abc } }"))).toEqual([
      expect.stringMatching(/^<dir>\/dev\.yaml:2:23 YAML warning: Unresolved tag: !secret/),
    ]);
  });
});
