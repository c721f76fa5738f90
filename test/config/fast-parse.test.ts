/**
 * The fast path (js-yaml) and the `yaml` path must give the same value for every file the fast
 * path reads, and leave every other file to the `yaml` path, which reads it as it always did.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { fastParse } from "../../src/config/fast-parse.js";
import { parseWithPositions, parseYaml } from "../../src/config/parse.js";
import { lines } from "./helpers.js";

/** What the `yaml` path alone reads (the Document, then toJS). */
const slowValue = (text: string): unknown => parseWithPositions("/f.yaml", text).value;

/** Order of keys, -0, NaN, ±Infinity and own `__proto__` keys all count. */
const exact = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "number" ? `number:${Object.is(v, -0) ? "-0" : String(v)}` : v));

const SCALARS = [
  "yes",
  "no",
  "on",
  "off",
  "y",
  "n",
  "Yes",
  "NO",
  "True",
  "TRUE",
  "true",
  "False",
  "FALSE",
  "tRUE",
  "~",
  "null",
  "Null",
  "NULL",
  "nULL",
  "",
  "0x1F",
  "0x1f",
  "-0x1F",
  "+0x1F",
  "0X1F",
  "0o17",
  "-0o17",
  "0o8",
  "017",
  "0b101",
  "08",
  "0",
  "-0",
  "+0",
  "+12",
  "1_000",
  "12345678901234567890",
  "1e3",
  "1E3",
  "-1e-3",
  "1.5e+3",
  ".5",
  "5.",
  "-.5",
  "1.50",
  "1.0",
  "+1.0",
  ".",
  "1e",
  "e3",
  ".inf",
  "-.inf",
  "+.inf",
  ".Inf",
  "-.INF",
  ".nan",
  ".NaN",
  ".NAN",
  "-.nan",
  "inf",
  "nan",
  "Infinity",
  "2001-12-14",
  "2001-12-14t21:59:43.10-05:00",
  "12:30:00",
  "1:20",
  "=",
  "<",
  "0.",
  "- a",
  "a: b",
  "'quoted 1'",
  '"2"',
  "'true'",
  '"~"',
  '"\\u00e9\\x41\\t\\/"',
  "'it''s'",
  "plain text # comment",
  "a#b",
  "http://x:80/a?b=c",
];

const SAMPLES: Record<string, string> = {
  "every tricky scalar, as values": ["values:", ...SCALARS.filter((s) => !/^- |: /.test(s)).map((s, i) => `  k${i}: ${s}`)].join("\n"),
  "every tricky scalar, in a flow list": `list: [${SCALARS.filter((s) => !/[,:#[\]{}-]|^$/.test(s)).join(", ")}]`,
  "scalars as keys": lines("keys:", "  1: a", "  0x10: b", "  1.50: c", "  true: d", "  .inf: e", "  yes: f", "  '0x10': g", "  -0: h"),
  "block scalars and plain strings over lines": lines(
    "literal: |",
    "  line one",
    "    indented",
    "",
    "  after a blank",
    "folded: >-",
    "  folded",
    "  text",
    "",
    "  new paragraph",
    "keep: |+",
    "  kept",
    "",
    "strip: |2-",
    "    two extra",
    "plain: first",
    "  continued",
    "",
    "  paragraph",
  ),
  "flow collections": lines(
    "a: {x: 1, 'y': [1, 2, {z: null}], w: }",
    "b: [ ]",
    "c: { }",
    "d: [a, b, ]",
    '"e": {"json": true, "n": -1.5e10}',
  ),
  "nested block lists": lines("a:", "- - 1", "  - 2", "- x: 1", "  y: 2", "-", "- ''"),
  "keys that are own properties": lines("__proto__: { polluted: true }", "constructor: 1", "toString: 2", "hasOwnProperty: 3"),
  "comments, documents start and end": lines("# header", "---", "a: 1 # trailing", "# between", "b: 2", "..."),
  "a BOM": "\uFEFFa: 1\n",
  "unicode and escapes": lines('a: "\\u263A \\U0001F600 \\N \\_ \\L \\P \\e \\0 \\a"', "b: é ü 日本", "c: 'tab\there'"),
  "CRLF line ends": "flags:\r\n  a:\r\n    variants: { on: true }\r\n    defaultVariant: on\r\n",
  "long keys and strings": `k${"x".repeat(500)}: ${"y".repeat(520)}\n`,
  "a JSON document": JSON.stringify(
    { flags: { a: { variants: { on: true, off: false }, defaultVariant: "off", metadata: { n: 1.25, neg: -0 } } } },
    null,
    2,
  ),
  "a JSON document, tab-indented, keys that look special": JSON.stringify(
    { null: 1, "~": 2, "a,b": 3, "<<": 4, "": 5, __proto__: { x: 1 }, e: 'q"\\#: *a !t' },
    null,
    "\t",
  ),
  "a JSON document in one line, CRLF after": `${JSON.stringify({ a: [1, -0, 1e300, 0.5, "x"], b: { c: null, d: false } })}\r\n`,
  "YAML in flow style": lines("{ a: 1, b: [x, 'y'], c: { d: ~ } }"),
  "the example file": readFileSync(new URL("../../flags.example.yaml", import.meta.url), "utf8"),
};

describe("the fast path gives what the yaml path gives", () => {
  for (const [name, text] of Object.entries(SAMPLES)) {
    it(name, () => {
      const fast = fastParse(text.replace(/^\uFEFF/, ""));
      expect(fast).not.toBeUndefined(); // a sample the fast path declines would test nothing
      expect(slowValue(text)).not.toBeUndefined();
      expect(exact(fast)).toBe(exact(slowValue(text)));
    });
  }

  it("reads every scalar the way the yaml path does, one by one", () => {
    for (const s of SCALARS) {
      const text = `v: ${s}\n`;
      const fast = fastParse(text);
      if (fast !== undefined) expect(exact(fast), text).toBe(exact(slowValue(text)));
    }
  });
});

describe("what the fast path leaves to the yaml path", () => {
  const LEFT: Record<string, string> = {
    "an alias": lines("base: &b { x: 1 }", "copy: *b"),
    "a merge key": lines("base: &b { x: 1 }", "merged:", "  <<: *b", "  y: 2"),
    "an inline merge key": lines("merged:", "  <<: { x: 1 }", "  <<: { y: 1 }"),
    "a tag": lines("a: !!str 1", "b: !!binary aGk="),
    "a local tag": "a: !custom x\n",
    "a tag in a flow mapping": '{"a":!!int "1"}\n',
    "a %YAML directive": lines("%YAML 1.1", "---", "a: yes"),
    "a duplicate key": lines("a: 1", "a: 2"),
    "keys equal once read": lines("1: a", "'1': b"),
    "a null key": lines("~: a", "b: 1"),
    "an empty key": lines(": a", "b: 1"),
    "a null key in a list item": lines("a:", "  - null: 1"),
    "a null key in a flow mapping": lines("b: {x: 1, NULL: 2}"),
    "a null key in a flow pair": lines("c: [~: 3]"),
    "an empty key in a flow mapping": lines("d: {: 4}"),
    "a mapping as a key, in flow": lines("{a: 1}: x"),
    "a list as a key": lines("? [a, b]", ": x"),
    "a mapping as a key": lines("? {a: 1}", ": x"),
    "a syntax error": lines("a: [1, 2", "b: 1"),
    "a quoted string over lines": lines('a: "one', '  two"'),
    "a flow collection over lines": lines("a: [1,", "  2]"),
    "a flow collection over lines, too little indented": lines("a:", "  - [1,", "  2]"),
    "a lone carriage return": "a: 1\rb: 2\n",
    "a line longer than a key may be": `k${"x".repeat(1100)}: 1\n`,
    "a list of one as a key": lines("[a]: 1"),
    "a duplicate key in JSON": '{"a": 1, "a": 2}',
    "a duplicate key in JSON, escapes before it": '{"x\\"": "\\\\", "a": 1, "b": {"a": 2, "a": 3}}',
    "JSON with a lone carriage return": '{"a":\r1}',
    "two documents": lines("a: 1", "---", "b: 2"),
    "an empty file": "",
    "only a comment": "# nothing\n",
    "a null document": "~\n",
  };
  for (const [name, text] of Object.entries(LEFT)) {
    it(name, () => expect(fastParse(text)).toBeUndefined());
  }

  it("parseYaml still reads them as before, problems and positions included", () => {
    // The `yaml` package warns (process.emitWarning) when it turns a list or mapping used as a
    // key into a string key: caught here, where such keys are read on purpose, and checked.
    const warnings: string[] = [];
    const emitWarning = vi
      .spyOn(process, "emitWarning")
      .mockImplementation((warning: string | Error) => void warnings.push(String(warning)));
    try {
      for (const text of Object.values(LEFT)) {
        const parsed = parseYaml("/f.yaml", text);
        const slow = parseWithPositions("/f.yaml", text);
        expect(exact(parsed.value)).toBe(exact(slow.value));
        expect(parsed.problems).toEqual(slow.problems);
      }
    } finally {
      emitWarning.mockRestore();
    }
    // Once by parseYaml and once by parseWithPositions for each collection key in LEFT.
    const stringified = (key: string) =>
      `Keys with collection values will be stringified due to JS Object restrictions: "${key}". Set mapAsMap: true to use object keys.`;
    expect(warnings).toEqual([
      stringified("{ a: 1 }"),
      stringified("{ a: 1 }"),
      stringified("[ a, b ]"),
      stringified("[ a, b ]"),
      stringified("{ a: 1 }"),
      stringified("{ a: 1 }"),
      stringified("[ a ]"),
      stringified("[ a ]"),
    ]);
    expect(parseYaml("/f.yaml", lines("base: &b { x: 1 }", "merged:", "  <<: *b", "  y: 2")).value).toEqual({
      base: { x: 1 },
      merged: { x: 1, y: 2 },
    });
    expect(parseYaml("/f.yaml", lines("a: 1", "a: 2")).problems).toEqual([
      { file: "/f.yaml", line: 2, col: 1, message: "duplicate key 'a'" },
    ]);
  });

  it("a file read by the fast path still locates a path, from a Document built on demand", () => {
    const parsed = parseYaml("/f.yaml", lines("flags:", "  a:", "    variants: { on: true }", "    defaultVariant: 'off'"));
    expect(parsed.doc).toBeUndefined(); // no Document unless a position is asked for
    expect(parsed.source?.locate(["flags", "a", "defaultVariant"])).toEqual({ line: 4, col: 21 });
    expect(parsed.source?.locate(["flags", "a"], "key")).toEqual({ line: 2, col: 3 });
  });
});
