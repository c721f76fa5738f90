/**
 * Hostile documents at each stage of the loader (read, parse, shape, validate, merge, compile):
 * nesting thousands deep, big, or of odd types. Whatever they are, no exception escapes a load:
 * each is a problem of its own environment, and the other environments load.
 */
import { describe, expect, it } from "vitest";
import { loadSourceReads } from "../../src/config/load.js";
import { parseYaml } from "../../src/config/parse.js";
import { MAX_ALIAS_NODES, MAX_DEPTH, textNestingProblem, valueShapeProblem } from "../../src/config/nesting.js";
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
  "compact nested lists (`- - - ...`, 100 KB)": `flags:\n  f:\n    variants:\n      a:\n        ${"- ".repeat(50_000)}x\n`,
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
  it("a parsed value's shape is measured without recursion: depth, and size once aliases are expanded", () => {
    expect(valueShapeProblem(nested(MAX_DEPTH), 0)).toBeUndefined();
    expect(valueShapeProblem(nested(MAX_DEPTH + 1), 0)).toMatch(/nested deeper than 128 levels/);
    expect(valueShapeProblem(nested(100_000), 0)).toMatch(/nested deeper than 128 levels/);
    // One shared list used many times: each use counts.
    const shared = Array.from({ length: 1000 }, (_, i) => i);
    const uses = (n: number) => ({ flags: Array.from({ length: n }, () => shared) });
    expect(valueShapeProblem(uses(90), 0)).toBeUndefined();
    expect(valueShapeProblem(uses(101), 0)).toMatch(new RegExp(`more than ${MAX_ALIAS_NODES} values`));
    expect(valueShapeProblem(uses(101), 10_000)).toBeUndefined();
    // A value that contains itself (an alias inside the node it names) is endlessly deep.
    const loop: unknown[] = [];
    loop.push(loop);
    expect(valueShapeProblem(loop, 0)).toMatch(/nested deeper than 128 levels/);
  });

  it("a text nested too deep is refused before a parser recurses into it, at the bracket past the limit", () => {
    // The yaml package's recursion overflowed the stack here, and near the stack's limit V8 may
    // abort the process instead of throwing (seen: "RegExpCompiler Allocation failed").
    expect(parseYaml("bad.yaml", `flags: ${open}`).problems).toEqual([
      {
        file: "bad.yaml",
        line: 1,
        col: "flags: ".length + MAX_DEPTH,
        message: `the document is nested deeper than ${MAX_DEPTH} levels of mappings and lists; no flag configuration needs that`,
      },
    ]);
    expect(parseYaml("ok.yaml", `flags: ${"[".repeat(MAX_DEPTH - 1)}${"]".repeat(MAX_DEPTH - 1)}`).problems).toEqual([]);
  });

  it("block nesting counts too: indentation and `- - -` runs, at the line where the limit is passed", () => {
    const compact = `flags:\n  f:\n    variants:\n      a: 1\n    note:\n      ${"- ".repeat(50_000)}x\n`;
    expect(textNestingProblem(compact)).toEqual({
      line: 6,
      // The root, flags and f are three levels; the 126th `- ` opens the 129th.
      col: "      ".length + 2 * 125 + 1,
      message: `the document is nested deeper than ${MAX_DEPTH} levels of mappings and lists; no flag configuration needs that`,
    });
    const indented = `flags:\n${Array.from({ length: 200 }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} 1\n`;
    expect(textNestingProblem(indented)).toMatchObject({ line: 129, col: 129 });
    // Deep indentation that nests nothing (a block scalar), or nests within the limit, is fine.
    const note = `flags: {}\nmetadata:\n  note: |\n${" ".repeat(300)}indented text\n`;
    expect(textNestingProblem(note)).toBeUndefined();
    expect(parseYaml("note.yaml", note).problems).toEqual([]);
    const within = `flags:\n${Array.from({ length: 100 }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} 1\n`;
    expect(textNestingProblem(within)).toBeUndefined();
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
      `1:${`{"environments":{"x":{"flags":`.length + 126} the document is nested deeper than 128 levels of mappings and lists; no flag configuration needs that`,
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
