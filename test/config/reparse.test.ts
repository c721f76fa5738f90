/**
 * Reading an edit where it changed (reparse.ts) must give exactly what reading the whole new text
 * with the fast path gives (the same value, key order included), or decline: checked on chosen
 * edits and on thousands of random ones (seeded), some of which break the file on purpose.
 */
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { fastParse } from "../../src/config/fast-parse.js";
import { reparseEdit as reparseWithin } from "../../src/config/reparse.js";
import { MAX_DEPTH, textNestingDepth } from "../../src/config/shape.js";
import { editOf } from "../../src/model/edits.js";

/** reparseEdit with the room a server gives it, and its bound on the new text's nesting checked. */
function reparseEdit(last: string, lastValue: unknown, text: string) {
  const nesting = textNestingDepth(last);
  const reparsed = reparseWithin(last, lastValue, text, MAX_DEPTH - nesting);
  if (reparsed) expect(textNestingDepth(text)).toBeLessThanOrEqual(nesting + reparsed.nestingGrowth);
  return reparsed;
}

/** Order of keys, -0, NaN, ±Infinity and own `__proto__` keys all count. */
const exact = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "number" ? `number:${Object.is(v, -0) ? "-0" : String(v)}` : v));

function flag(i: number): Record<string, unknown> {
  const base = {
    state: i % 7 === 6 ? "DISABLED" : "ENABLED",
    variants: { on: true, off: false },
    defaultVariant: "off",
  };
  if (i % 3 === 0) return { ...base, targeting: { if: [{ $ref: "beta" }, "on", "off"] } };
  if (i % 3 === 1) return { ...base, metadata: { owner: `team-${i}`, note: "line one\nline two\n" } };
  return { ...base, targeting: { fractional: [{ var: "targetingKey" }, ["on", 50], ["off", 50]] } };
}

function environment(count: number, apiKey: string): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) flags[`flag-${String(i).padStart(3, "0")}`] = flag(i);
  return { apiKey, $evaluators: { beta: { ends_with: [{ var: "email" }, "@example.com"] } }, flags };
}

/** One environment with comments between entries (as a person writes it). */
const SINGLE = stringify(environment(80, "key-one-0123456789")).replace(/^ {2}flag-0(\d)0:/gm, "  # group $1\n  flag-0$10:");
const MULTI = stringify({ environments: { dev: environment(40, "key-dev-0123456789"), prod: environment(40, "key-prod-012345678") } });
const CRLF = SINGLE.replace(/\n/g, "\r\n");

function parse(text: string): Record<string, unknown> {
  const value = fastParse(text);
  if (typeof value !== "object" || value === null) throw new Error("the fixture must be read by the fast path");
  return value as Record<string, unknown>;
}

/** reparseEdit's answer checked against a whole parse; returns it. */
function checked(last: string, text: string) {
  const reparsed = reparseEdit(last, parse(last), text);
  if (reparsed !== undefined) expect(exact(reparsed.value)).toBe(exact(fastParse(text)));
  return reparsed;
}

/**
 * Every record of what an edit replaced (model/edits.ts) in `value` keeps its promise: the keys of
 * the value it names, in order, and the very same entries except those named, which differ.
 */
function expectRecordsHold(value: unknown): void {
  if (typeof value !== "object" || value === null) return;
  const edit = editOf(value);
  if (edit !== undefined) {
    const [mapping, from] = [value as Record<string, unknown>, edit.from as Record<string, unknown>];
    expect(Object.keys(mapping)).toEqual(Object.keys(from));
    expect(Object.keys(mapping).filter((key) => mapping[key] !== from[key])).toEqual([...edit.changed]);
  }
  for (const part of Object.values(value)) expectRecordsHold(part);
}

describe("an edit is read where it changed", () => {
  it("unless it might nest the text deeper than the room left: then the whole text is checked", () => {
    const last = parse(SINGLE);
    const text = SINGLE.replace("flag-013:\n", `flag-013:\n    note: "${"[".repeat(40)}"\n`);
    expect(reparseWithin(SINGLE, last, text, 39)).toBeUndefined();
    expect(reparseWithin(SINGLE, last, text, 40)?.nestingGrowth).toBe(40);
    expect(exact(reparseWithin(SINGLE, last, text, 40)!.value)).toBe(exact(fastParse(text)));
  });

  it("one flag's line: only that flag is read again, and every other flag is the last value's object", () => {
    const last = parse(SINGLE);
    const text = SINGLE.replace(/(flag-041:\n(?: {4}.*\n)*? {4}defaultVariant:) off/, "$1 on");
    expect(text).not.toBe(SINGLE);
    const reparsed = reparseEdit(SINGLE, last, text)!;
    expect(reparsed).toBeDefined();
    expect(exact(reparsed.value)).toBe(exact(fastParse(text)));
    expect(reparsed.charsParsed).toBeLessThan(600);
    const [flags, lastFlags] = [reparsed.value.flags as Record<string, unknown>, last.flags as Record<string, unknown>];
    expect(Object.keys(flags).filter((key) => flags[key] !== lastFlags[key])).toEqual(["flag-041"]);
    expect(reparsed.value.$evaluators).toBe(last.$evaluators);
    // Recorded, so that the parse worker sends that flag without comparing the others (share.ts).
    expect(editOf(reparsed.value)).toEqual({ from: last, changed: ["flags"] });
    expect(editOf(flags)).toEqual({ from: lastFlags, changed: ["flag-041"] });
  });

  it("a flag added at the end, removed, or renamed; an edit in a multi-environment file or with \\r\\n", () => {
    const added = `${SINGLE}  flag-new:\n    state: ENABLED\n    variants: { a: 1 }\n    defaultVariant: a\n`;
    expect(checked(SINGLE, added)!.charsParsed).toBeLessThan(600);
    const removed = SINGLE.replace(/ {2}flag-012:\n(?: {4}.*\n)*/, "");
    expect(checked(SINGLE, removed)!.charsParsed).toBeLessThan(600);
    expect(checked(SINGLE, SINGLE.replace("flag-013:", "renamed:"))!.charsParsed).toBeLessThan(600);
    const multi = MULTI.replace(/(prod:[^]*?flag-021:\n(?: {8}.*\n)*? {8}state:) ENABLED/, "$1 DISABLED");
    expect(multi).not.toBe(MULTI);
    expect(checked(MULTI, multi)!.charsParsed).toBeLessThan(600);
    expect(checked(CRLF, CRLF.replace("flag-013:", "renamed:"))!.charsParsed).toBeLessThan(600);
  });

  it("the same text is the last value itself", () => {
    const last = parse(SINGLE);
    expect(reparseEdit(SINGLE, last, SINGLE)).toEqual({ value: last, charsParsed: 0, nestingGrowth: 0 });
  });

  it.each([
    ["a key the rest of the file has", SINGLE.replace("flag-013:", "flag-014:")],
    ["an integer key", SINGLE.replace("flag-013:", "42:")],
    ["an alias", SINGLE.replace("flag-013:\n", "flag-013: *x\n")],
    ["a quote left open", SINGLE.replace("flag-013:\n", "flag-013: 'open\n")],
    ["brackets nested past the limit", SINGLE.replace("flag-013:\n", `flag-013: ${"[".repeat(200)}${"]".repeat(200)}\n`)],
    ["the section's own line", SINGLE.replace("flags:", "flags: # all of them")],
    ["a line left of the block", SINGLE.replace("  flag-013:", " flag-013:")],
    ["a document marker", SINGLE.replace("apiKey:", "---\napiKey:")],
    ["JSON", JSON.stringify(parse(SINGLE))],
  ])("declines (or agrees with the whole parse): %s", (_, text) => {
    expect(text).not.toBe(SINGLE);
    const reparsed = checked(SINGLE, text);
    if (fastParse(text) === undefined) expect(reparsed).toBeUndefined();
  });
});

/** A seeded generator (mulberry32): the same edits on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lines an edit writes: well-formed ones at every column, and the constructs the fast path turns away. */
const PIECES = [
  "flag-new:",
  "flag-001:",
  "flag-002: x",
  "state: DISABLED",
  "defaultVariant: on",
  "defaultVariant: 'on'",
  "variants: { on: true, off: false }",
  "variants:",
  "on: true",
  "- a",
  "- on",
  "- var: email",
  "-",
  "# a comment",
  "",
  "---",
  "...",
  "42: x",
  "__proto__: x",
  "flags:",
  "segments: {}",
  'note: "open',
  "note: [a, b",
  "note: *anchor",
  "note: &anchor x",
  "? key",
  "note: |",
  "note: >-",
  "text in a block",
  "\tnote: x",
  "note: !tag x",
  "<<: {}",
  "~: x",
  ": x",
  "note: a # b",
  "note: 'a''b'",
  "note: x\r",
];

function randomEdit(text: string, next: () => number): string {
  const lines = text.split("\n");
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const at = Math.floor(next() * lines.length);
  const kind = next();
  if (kind < 0.3) {
    // A word of a line changed (a value flipped, a key renamed).
    const line = lines[at]!;
    const words = ["on", "off", "true", "ENABLED", "DISABLED", "flag-020", "x", ":", " ", "'", "[", "-", "#", ""];
    const from = Math.floor(next() * (line.length + 1));
    const to = Math.min(line.length, from + Math.floor(next() * 6));
    lines[at] = line.slice(0, from) + pick(words) + line.slice(to);
  } else if (kind < 0.45) {
    // A line's indentation changed.
    lines[at] = " ".repeat(Math.floor(next() * 7)) + lines[at]!.trimStart();
  } else {
    // Lines removed and others written in their place, at the columns around them.
    const removed = Math.floor(next() * 4);
    const written: string[] = [];
    for (let n = Math.floor(next() * 4); n > 0; n--) written.push(" ".repeat(pick([0, 2, 2, 4, 4, 4, 6, 8, 1, 3])) + pick(PIECES));
    lines.splice(at, removed, ...written);
  }
  return lines.join("\n");
}

const EDITS = 800;

describe("random edits: the same value as a whole parse, or declined", () => {
  it.each([
    ["one environment", SINGLE, 1],
    ["environments in one file", MULTI, 2],
    ["\\r\\n line ends", CRLF, 3],
  ])("%s", (_, fixture, seed) => {
    const next = random(seed);
    let read = 0;
    let small = 0;
    let declined = 0;
    let readable = 0;
    let recorded = 0;
    let last = fixture;
    let lastValue: unknown = parse(fixture);
    for (let i = 0; i < EDITS; i++) {
      // Chains of edits from the last good text, as a person saving again and again; back to the start now and then.
      const text = randomEdit(last, next);
      const whole = fastParse(text);
      const reparsed = reparseEdit(last, lastValue, text);
      if (whole !== undefined) readable++;
      if (reparsed === undefined) declined++;
      else {
        expect(whole, `accepted an edit the whole parse turns away:\n${text}`).toBeDefined();
        expect(exact(reparsed.value), `edit ${i}`).toBe(exact(whole));
        expectRecordsHold(reparsed.value);
        if (editOf(reparsed.value) !== undefined) recorded++;
        read++;
        if (reparsed.charsParsed < text.length / 4) small++;
      }
      if (whole !== undefined && typeof whole === "object" && whole !== null && next() < 0.8) {
        last = text;
        lastValue = reparsed?.value ?? whole;
      } else if (next() < 0.1) {
        last = fixture;
        lastValue = parse(fixture);
      }
    }
    // Not a test that passes by declining everything: most edits that keep the file readable are read where they changed.
    expect(readable).toBeGreaterThan(EDITS / 5);
    expect(read).toBeGreaterThan(readable * 0.9);
    expect(small).toBeGreaterThan(read * 0.9);
    // Most of them keep the keys where they were, and say which entries they replaced.
    expect(recorded).toBeGreaterThan(read / 2);
    expect(read + declined).toBe(EDITS);
  });
});
