/**
 * Hostile documents at each stage of the loader (read, parse, shape, validate, merge, compile):
 * nesting thousands deep, big, or of odd types. Whatever they are, no exception escapes a load:
 * each is a problem of its own environment, and the other environments load.
 */
import { describe, expect, it } from "vitest";
import { loadSourceReads } from "../../src/config/load.js";
import { parseYaml } from "../../src/config/parse.js";
import { MAX_DEPTH, nestingDepth, shapeProblem } from "../../src/config/shape.js";
import { recordEdit } from "../../src/model/edits.js";
import { decodeUtf8 } from "../../src/sources/decode.js";
import { readFiles } from "../../src/sources/read-once.js";
import type { SourceDocument, SourceLoad } from "../../src/sources/source.js";
import { tempDir } from "../helpers/files.js";

const GOOD = "apiKey: good-key-0123456789\nflags:\n  f: { variants: { a: 1, b: 2 }, defaultVariant: a }\n";

const open = "[".repeat(5700); // the reported document: about 11.5 KB of nested `[`
const closed = `${"[".repeat(5700)}${"]".repeat(5700)}`;
const deepObject = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`;
const flag = (fields: string) => `{"flags":{"f":{"variants":{"a":1},"defaultVariant":"a"${fields}}}}`;

/** Documents nested deeper than any stage can walk: each must be a problem of its environment. */
const DEEP: Record<string, string> = {
  "unclosed [ (YAML)": `flags: ${open}`,
  "closed [ (JSON)": `{"flags": ${closed}}`,
  "deep mappings (JSON)": `{"flags": ${deepObject}}`,
  "deep targeting": flag(`,"targeting":${closed}`),
  "deep variant value": `{"flags":{"f":{"variants":{"a":${deepObject}},"defaultVariant":"a"}}}`,
  "deep segment": `{"segments":{"s":${closed}},"flags":{}}`,
  "deep metadata": `{"metadata":{"m":${deepObject}},"flags":{}}`,
  "deep block YAML": `flags:\n${Array.from({ length: 400 }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} 1\n`,
};

/** Documents of odd types and sizes: a problem or a load, never an exception. */
const ODD: Record<string, string> = {
  number: "42",
  string: '"text"',
  null: "null",
  empty: "",
  list: "[1, 2]",
  "flags a number": "flags: 3",
  "flags a list of odd items": "flags: [1, null, {}, [], { key: 3 }]",
  "a flag a number": "flags: { f: 1 }",
  "variants a list": "flags: { f: { variants: [1, 2], defaultVariant: 0 } }",
  "targeting a string": "flags: { f: { variants: { a: 1 }, defaultVariant: a, targeting: x } }",
  "$ref an object": "flags: { f: { variants: { a: 1 }, defaultVariant: a, targeting: { $ref: { x: 1 } } } }",
  "odd operators": flag(`,"targeting":{"fractional":[[{},1e308]],"sem_ver":[[],{}],"in":[null]}`),
  "prototype keys":
    '{"flags":{"__proto__":{"variants":{"a":1},"defaultVariant":"a"},"constructor":{"variants":{"a":1},"defaultVariant":"a"}}}',
  "segments a list": "segments: [1]\nflags: {}",
  "apiKey a list": "apiKey: [1]\nflags: {}",
  aliases: "a: &a [1, 2]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nflags: { f: { variants: { a: *c }, defaultVariant: a } }",
  "a 2 MB string": `flags: {}\nmetadata: { note: "${"x".repeat(2 * 1024 * 1024)}" }`,
  "10 000 flags": `flags:\n${Array.from({ length: 10_000 }, (_, i) => `  f${i}: { variants: { a: ${i} }, defaultVariant: a }`).join("\n")}\n`,
  "NUL and control characters": 'flags: { "f\\u0000\\u001b[2J": { variants: { a: 1 }, defaultVariant: a } }',
};

const reads = (hostile: SourceDocument): SourceLoad[] => [
  { id: "good.yaml", documents: [{ stem: "good", document: { file: "good.yaml", text: GOOD } }], environments: [], problems: [] },
  { id: "bad.yaml", documents: [{ stem: "bad", document: hostile }], environments: [], problems: [] },
];

/** Values nested `depth` deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

describe("hostile documents", () => {
  it("the shape check measures nesting without recursion, and stops counting past the limit", () => {
    expect(nestingDepth(1)).toBe(0);
    expect(nestingDepth({ a: [1, { b: {} }] })).toBe(4);
    expect(nestingDepth(nested(MAX_DEPTH))).toBe(MAX_DEPTH);
    expect(nestingDepth(nested(100_000))).toBe(MAX_DEPTH + 1);
  });

  it("a text nested too deep is refused before a parser recurses into it, at the bracket past the limit", () => {
    // The yaml package's recursion overflowed the stack here, and near the stack's limit V8 may
    // abort the process instead of throwing (seen: "RegExpCompiler Allocation failed").
    expect(parseYaml("bad.yaml", `flags: ${open}`).problems).toEqual([
      {
        file: "bad.yaml",
        line: 1,
        col: "flags: ".length + MAX_DEPTH + 1,
        message: `the document nests deeper than ${MAX_DEPTH} levels of [ and {; no flag configuration needs that`,
      },
    ]);
    expect(parseYaml("ok.yaml", `flags: ${"[".repeat(MAX_DEPTH)}${"]".repeat(MAX_DEPTH)}`).problems).toEqual([]);
  });

  it("the shape check does not walk again the parts of a value shared with one it checked", () => {
    // A flag whose every read is counted: walking it reads its properties.
    let reads = 0;
    const counted = (): Record<string, unknown> => {
      const flag = {};
      for (const key of ["state", "variants"])
        Object.defineProperty(flag, key, { enumerable: true, get: () => (reads++, key === "state" ? "ENABLED" : { on: true }) });
      return flag;
    };
    const kept = counted();
    const last = { flags: { a: kept, b: { variants: { on: true } } } };
    const next = { flags: { a: kept, b: nested(MAX_DEPTH) } };
    expect(shapeProblem(last)).toBeUndefined();
    reads = 0;
    // The changed flag is walked (and found too deep); the shared one is not read at all.
    expect(shapeProblem(next, last)).toMatch(/deeper than 128/);
    expect(shapeProblem({ flags: { a: kept, b: {} } }, last)).toBeUndefined();
    expect(reads).toBe(0);
    // The same object at another place is walked: its depth there is not known.
    expect(shapeProblem({ flags: { c: kept } }, last)).toBeUndefined();
    expect(reads).toBe(2);
  });

  it("of a mapping an edit made from the one checked, walks the replaced entries alone", () => {
    let reads = 0;
    const last = { flags: { a: { variants: { on: true } }, b: { variants: { on: true } } } };
    const flags: Record<string, unknown> = {};
    // Every read of an entry the edit did not replace is counted.
    Object.defineProperty(flags, "a", { enumerable: true, get: () => (reads++, last.flags.a) });
    flags.b = nested(MAX_DEPTH);
    const next = { flags };
    recordEdit(flags, last.flags, ["b"]);
    expect(shapeProblem(next, last)).toMatch(/deeper than 128/);
    expect(reads).toBe(0);
    // Without the record (or from another mapping), every entry is read.
    recordEdit(flags, {}, ["b"]);
    expect(shapeProblem(next, last)).toMatch(/deeper than 128/);
    expect(reads).toBe(1);
  });

  it("parsing never throws, whatever the text", () => {
    for (const [name, text] of Object.entries({ ...DEEP, ...ODD })) {
      expect(() => parseYaml("bad.yaml", text), name).not.toThrow();
    }
  });

  it("a document nested too deep is a problem of its own environment; the others load", async () => {
    for (const [name, text] of Object.entries(DEEP)) {
      const load = await loadSourceReads(reads({ file: "bad.yaml", text }));
      expect([...load.environments.keys()], name).toEqual(["good"]);
      expect(load.problems.get("bad")?.length, name).toBeGreaterThan(0);
    }
  });

  it("a value nested too deep (the programmatic API, update()) is a problem too", async () => {
    for (const depth of [MAX_DEPTH + 1, 10_000, 100_000]) {
      const load = await loadSourceReads(
        reads({ file: "<inline:bad>", value: { flags: { f: { variants: { a: nested(depth) }, defaultVariant: "a" } } } }),
      );
      expect([...load.environments.keys()]).toEqual(["good"]);
      expect(load.problems.get("bad")?.[0]?.message).toMatch(/deeper than 128 levels|not JSON data: Maximum call stack/);
    }
  });

  it("documents of odd types and sizes load or are problems; none throws, none takes the good environment along", async () => {
    for (const [name, text] of Object.entries(ODD)) {
      const load = await loadSourceReads(reads({ file: "bad.yaml", text }));
      expect(load.environments.has("good"), name).toBe(true);
      expect(load.environments.has("bad") || load.problems.has("bad") || load.problems.has(""), name).toBe(true);
    }
  });

  it("a multi-environment file nested too deep is a problem; the files beside it load", async () => {
    const dir = await tempDir();
    await dir.write("flags/good.yaml", GOOD);
    await dir.write("flags/all.json", `{"environments":{"x":{"flags":${closed}}}}`);
    const load = await loadSourceReads([await readFiles(dir.file("flags"))]);
    expect([...load.environments.keys()]).toEqual(["good"]);
    // Found in the text, before a parser recursed into it: at the bracket past the limit.
    expect([...load.problems.values()].flat().map((p) => `${p.line}:${p.col} ${p.message}`)).toContain(
      `1:${`{"environments":{"x":{"flags":`.length + 126} the document nests deeper than 128 levels of [ and {; no flag configuration needs that`,
    );
  });
});

describe("invalid UTF-8", () => {
  it("is a problem at the first bad byte's line and column, not text with U+FFFD", () => {
    const bytes = Buffer.concat([
      Buffer.from('flags:\n  f: { variants: { a: "caf'),
      Buffer.from([0xe9]),
      Buffer.from('" }, defaultVariant: a }\n'),
    ]);
    expect(decodeUtf8(bytes)).toEqual({ error: "not valid UTF-8: byte 0xe9 at byte offset 33; save the file as UTF-8", line: 2, col: 27 });
    // Multi-byte characters before it count as one column each; a U+FFFD written in the file is fine.
    const after = Buffer.concat([Buffer.from("é\uFFFD€😀\n\uFFFDx"), Buffer.from([0xc3, 0x28])]);
    expect(decodeUtf8(after)).toMatchObject({ line: 2, col: 3 });
    expect(decodeUtf8(Buffer.from("\uFEFFflags: {}\n"))).toEqual({ text: "\uFEFFflags: {}\n" });
  });

  it("in a file: the load reports it with its position, and the other files load", async () => {
    const dir = await tempDir();
    await dir.write("flags/good.yaml", GOOD);
    await dir.write("flags/bad.yaml", "");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      dir.file("flags/bad.yaml"),
      Buffer.concat([Buffer.from('flags: {}\nmetadata: { note: "x'), Buffer.from([0xff, 0xfe]), Buffer.from('" }\n')]),
    );
    const load = await loadSourceReads([await readFiles(dir.file("flags"))]);
    expect([...load.environments.keys()]).toEqual(["good"]);
    expect(load.problems.get("bad")).toEqual([
      {
        file: dir.file("flags/bad.yaml"),
        line: 2,
        col: 21,
        message: "not valid UTF-8: byte 0xff at byte offset 30; save the file as UTF-8",
      },
    ]);
  });
});
