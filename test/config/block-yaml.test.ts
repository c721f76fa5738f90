/**
 * The block reader (the first YAML reader of the fast path) must give what the `yaml` path
 * gives for every text it reads, and decline every other: checked on chosen samples, then on
 * thousands of generated block documents and on the same documents broken at random.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseBlockYaml } from "../../src/config/block-yaml.js";
import { CORE_SCALARS, plainScalarValue } from "../../src/config/core-scalars.js";
import { parseWithPositions } from "../../src/config/parse.js";
import { benchEnvironment } from "../../bench/lib.js";
import { lines } from "./helpers.js";

/** What the `yaml` path alone reads, and whether it found a problem. */
const slow = (text: string) => {
  const parsed = parseWithPositions("/f.yaml", text);
  return { value: parsed.value, ok: parsed.problems.length === 0 };
};

/** Order of keys, -0, NaN and ±Infinity all count. */
const exact = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "number" ? `number:${Object.is(v, -0) ? "-0" : String(v)}` : v));

/** Either declined, or exactly what the yaml path reads from a text it finds no problem in. */
function expectAgrees(text: string): boolean {
  const block = parseBlockYaml(text);
  if (block === undefined) return false;
  const { value, ok } = slow(text);
  expect(ok, text).toBe(true);
  expect(exact(block), text).toBe(exact(value));
  return true;
}

const READ: Record<string, string> = {
  "nested mappings and lists": lines("a:", "  b:", "    - 1", "    - x: 2", "      y: [] # empty", "  c: {}", "d: 'it''s'", 'e: "q\\"\\u00e9\\/"'),
  "a list at its key's column": lines("a:", "- x", "- - y", "  - z", "b: ~"),
  "compact lists and mappings in items": lines("-   - a", "    - b", "- k: v", "  l:", "  - 1", "-", "- # c", "  m: 1"),
  "comments anywhere, blank lines": lines("# head", "a: 1 # one", "", "# x", "b:   # about b", "   # deeper", "  c: 2", "  # in", "  d: 'x' # q"),
  "keys: quoted, typed, spaced": lines("'a b': 1", '"c" : 2', "3: three", "0x10: hex", "1.50: f", "true: t", "-0: z", "e : spaced", "a:b: colon"),
  "plain scalars that look special": lines("a: -x", "b: x]", "c: b,c", "d: x}y", "e: http://x:80/a?b=c", "f: a#b", "h: =", "i: x!*&|"),
  "indented top level": lines("  a: 1", "  b:", "    - 2"),
  "flow collections on one line": lines(
    "a: { on: true, off: false } # c",
    "b: [{ var: email }, [alice@example.org, 'x,y'], \"@e\", { }, [ ]]",
    'c: {"json": 1, "k":2, n: -1.5e3, u: http://x:80/a}',
    "d:",
    "  - [blue, 50]",
    "  - { $ref: seg }",
  ),
  "a file as yaml.stringify writes it": stringify(benchEnvironment(50)),
  "the example file": readFileSync(new URL("../../flags.example.yaml", import.meta.url), "utf8"),
};

const DECLINED: Record<string, string> = {
  "a flow collection over lines": lines("a: [1,", "  2]"),
  "a flow collection as a key": "[a]: 1\n",
  "a pair in a flow list": "a: [b: 1]\n",
  "a trailing comma": "a: [1, 2, ]\n",
  "a flow key without a value": "a: { b }\n",
  "a null key in a flow mapping": "a: { ~: 1 }\n",
  "a flow document": "{ a: 1 }\n",
  "a block scalar": lines("a: |", "  x"),
  "a scalar over lines": lines("a: one", "  two"),
  "a quoted scalar over lines": lines('a: "one', '  two"'),
  "an anchor and alias": lines("a: &x 1", "b: *x"),
  "a tag": "a: !!str 1\n",
  "a merge key": lines("<<:", "  x: 1"),
  "a duplicate key": lines("a: 1", "a: 2"),
  "keys equal once read": lines("1: a", "'1': b"),
  "a null key": lines("~: a"),
  "an empty key": lines(": a"),
  "an own __proto__ key": lines("__proto__:", "  x: 1"),
  "a nested mapping on one line": "a: b: c\n",
  "a comment without a space": 'a: "x"#c\n',
  "a tab": "a:\t1\n",
  "a carriage return": "a: 1\r\nb: 2\r\n",
  "a document marker": lines("---", "a: 1"),
  "a directive": lines("%YAML 1.2", "---", "a: 1"),
  "a YAML-only escape": 'a: "\\x41"\n',
  "a less indented item": lines("- - a", " - b"),
  "an item inside a mapping": lines("a: 1", "- b"),
  "a scalar document": "just text\n",
  "an empty text": "",
  "only comments": "# nothing\n",
  "a key too long": `k${"x".repeat(1100)}: 1\n`,
  "an astral character": "a: 😀\n",
  "a number that is not finite": "a: .inf\n",
  "a number too big to be finite, in a flow list": "a: [1, 1e999]\n",
};

describe("the block reader", () => {
  for (const [name, text] of Object.entries(READ)) {
    it(`reads ${name} as the yaml path does`, () => expect(expectAgrees(text)).toBe(true));
  }
  for (const [name, text] of Object.entries(DECLINED)) {
    it(`declines ${name}`, () => expect(parseBlockYaml(text)).toBeUndefined());
  }

  it("agrees with the yaml path on generated documents, whole and broken", () => {
    const random = seeded(12);
    let read = 0;
    let brokenRead = 0;
    for (let i = 0; i < 1500; i++) {
      const text = blockDocument(random);
      if (expectAgrees(text)) read++;
      if (expectAgrees(broken(text, random))) brokenRead++;
    }
    // Many whole documents are read (some hold a scalar the reader declines), and some broken
    // ones still are: both branches were exercised.
    expect(read).toBeGreaterThan(300);
    expect(brokenRead).toBeGreaterThan(100);
  });
});

describe("plain scalars", () => {
  /** The table alone, in order: what plainScalarValue's first-character shortcuts must agree with. */
  const byTable = (text: string): unknown => {
    for (const { first, forms } of CORE_SCALARS) {
      if (!first.test(text)) continue;
      for (const [test, construct] of forms) if (test.test(text)) return construct(text);
    }
    return text;
  };

  it("are read by their first character as the core schema's table reads them", () => {
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
    const texts = ["", ...ascii, ...ascii.map((c) => `${c}1`), ...ascii.map((c) => `${c}rue`), ...SCALARS, "nULL", "tRUE", "fALSE", "~~", "+.inf", "-0x1"];
    for (const text of texts) expect(exact(plainScalarValue(text)), text).toBe(exact(byTable(text)));
  });
});

// ---- generated documents --------------------------------------------------------------------

type Random = () => number;

/** A small deterministic generator (mulberry32). */
function seeded(seed: number): Random {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T,>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

const SCALARS = [
  "on", "off", "x", "ENABLED", "true", "False", "TRUE", "yes", "~", "null", "Null", "0", "-0", "+12", "0x1F", "0o17", "017",
  "1e3", "-1.5", ".5", "5.", ".inf", "-.Inf", ".nan", "12345678901234567890", "1_000", "2001-12-14", "12:30", "a b", "-x",
  "a#b", "x]", "b,c", "'q'", "'it''s'", '"d"', '"e\\"\\\\"', '"\\u00e9"', '"\\t"', "''", '""', "[]", "{}", "é ü", "a: b", "-", "[ ]", "[a, 1, ~]", "[[x], {k: v}]", "{a: 1, 'b': [2]}", '{"j":true}',
  "[x: 1]", "{a: b: c}", "[a,]", "{ on: yes, off: no }", "[a:b, 'c']", "{ k: 'v' # c }",
];
const KEYS = ["a", "b", "flag-1", "1", "0x10", "true", "'q k'", '"d"', "n", "x y", "-k", "on", "1.0"];

/** A block document: mappings and lists nested a few levels, comments and blank lines between. */
function blockDocument(random: Random): string {
  const out: string[] = [];
  const indentStep = pick(random, [2, 2, 4, 1]);
  const block = (indent: number, depth: number, kind: "map" | "list", first = ""): void => {
    const count = 1 + Math.floor(random() * 4);
    const used = new Set<string>();
    for (let i = 0; i < count; i++) {
      const lead = i === 0 && first !== "" ? first : " ".repeat(indent);
      const head = kind === "map" ? `${lead}${uniqueKey(random, used)}:` : `${lead}-`;
      if (random() < 0.15) out.push(" ".repeat(Math.floor(random() * 6)) + pick(random, ["# c", "", "#"]));
      const r = random();
      if (depth > 3 || r < 0.5) out.push(`${head} ${pick(random, SCALARS)}${random() < 0.1 ? " # note" : ""}`);
      else if (kind === "list" && r < 0.65) block(indent + 2, depth + 1, pick(random, ["map", "list"]), `${head} `);
      else {
        out.push(head + (random() < 0.1 ? " # about" : ""));
        const sameColumn = kind === "map" && random() < 0.2;
        block(sameColumn ? indent : indent + indentStep, depth + 1, sameColumn ? "list" : pick(random, ["map", "list"]));
      }
    }
  };
  block(0, 0, random() < 0.8 ? "map" : "list");
  return lines(...out);
}

function uniqueKey(random: Random, used: Set<string>): string {
  for (;;) {
    const key = pick(random, KEYS);
    if (!used.has(key)) return used.add(key), key;
  }
}

/** The document with one line changed: indented differently, cut, joined or given a stray character. */
function broken(text: string, random: Random): string {
  const all = text.split("\n");
  const i = Math.floor(random() * all.length);
  const line = all[i]!;
  const at = Math.floor(random() * (line.length + 1));
  all[i] = pick(random, [
    () => ` ${line}`,
    () => line.slice(1),
    () => line.slice(0, at),
    () => `${line.slice(0, at)}${pick(random, [":", ": ", "#", " #", "'", '"', "- ", "[", "&", "*", "!", "\t", "\\"])}${line.slice(at)}`,
    () => `${line} ${all[i + 1]?.trim() ?? ""}`,
  ])();
  return all.join("\n");
}
