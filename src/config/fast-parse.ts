/**
 * The fast path of parsing. JSON.parse reads a JSON file and js-yaml plain, well-formed YAML,
 * five to thirty times faster than the `yaml` package builds its Document (which keeps every
 * node's position and the CST; docs/architecture-config.md has the figures); most files are one
 * of these. The fast path answers only when
 * its value is certainly the one the `yaml` path gives: the same YAML 1.2 core schema (the
 * resolvers of core-scalars.ts mirror `yaml`'s, in its order) and nothing the readers treat each their own
 * way. Anything else (a tag, an alias, a merge key, a directive, a construct spanning lines, a
 * duplicate key, a syntax error, an empty file) returns undefined, and the `yaml` path reads the
 * file and reports what is wrong with its position.
 */
import { FAILSAFE_SCHEMA, load, Type } from "js-yaml";
import { BACKSLASH, COLON, COMMA, CR, DASH, DOUBLE, HASH, NL, OPEN_LIST, OPEN_MAP, SINGLE, SPACE, TAB } from "./char-codes.js";
import { CORE_SCALARS, type CoreScalar } from "./core-scalars.js";

/**
 * One implicit scalar type: `yaml`'s tests for the tag, the first that matches resolving (js-yaml
 * keeps one type per tag, so the int forms and the float forms are one type each). `first` turns
 * most scalars (words) away before any form is tried: every plain scalar of a file meets it.
 */
function scalar(tag: string, first: RegExp, forms: CoreScalar["forms"]): Type {
  let matched: { text: string; construct: (text: string) => unknown } | undefined;
  const formOf = (text: string) => forms.find(([test]) => test.test(text))?.[1];
  return new Type(`tag:yaml.org,2002:${tag}`, {
    kind: "scalar",
    resolve: (text: string | null) => {
      const construct = text === null || !first.test(text) ? undefined : formOf(text);
      matched = construct && text !== null ? { text, construct } : undefined;
      return matched !== undefined;
    },
    // js-yaml constructs right after resolving the same text: the form found is reused.
    construct: (text: string) => (matched?.text === text ? matched.construct : formOf(text)!)(text),
  });
}

/** `yaml`'s core schema, in the order it tries the types (core-scalars.ts). */
const CORE = FAILSAFE_SCHEMA.extend({ implicit: CORE_SCALARS.map(({ tag, first, forms }) => scalar(tag, first, forms)) });

/**
 * Text either reader treats its own way: a tag (`!`), an alias (`*`: `yaml` bounds how often
 * one expands, js-yaml does not), a merge key (`<<`: `yaml` reports two in one mapping), a
 * directive (`%YAML 1.1` changes the schema), an explicit key (`? `) or a list or mapping as a
 * key (`[a]: x`), which the two turn into different strings. Matched loosely (also inside strings,
 * where it is harmless): a false match only costs the slower path.
 */
const SPECIAL = /(?:^|[\s[\]{},:?-])[!*]|<<|^%|(?:^|[\s[\]{},])\?(?:\s|$)|[\]}][ \t]*:(?:[\s,\]}]|$)/m;

/**
 * A null key (`~:`, `null:`, or none before the `:`): "" in `yaml`, "null" in js-yaml. Matched
 * where a key can begin: a line's start, after `- `, or in a flow collection.
 */
const NULL_KEY = /(?:^[ \t]*(?:- +)*|[[{,][ \t]*)(?:~|null|Null|NULL)?[ \t]*:(?:[\s,\]}]|$)/m;

/**
 * The plain value of `text` (without a BOM), or undefined when the `yaml` path must read it:
 * JSON, else YAML js-yaml can read.
 */
export function fastParse(text: string): unknown {
  return parseJson(text) ?? parsePlainYaml(text);
}

/**
 * A JSON text is YAML with the same value, except for a lone \r (a line break in JSON only)
 * and duplicate keys (JSON.parse keeps the last; `yaml` reports them): counted, not guessed.
 */
function parseJson(text: string): unknown {
  if (!/^[ \t\r\n]*[[{]/.test(text) || /\r(?!\n)/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // not JSON; perhaps YAML written in flow style
  }
  return countKeys(value) === keysWritten(text) ? value : undefined;
}

/** How many keys the parsed value holds, in all its mappings. */
function countKeys(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (!Array.isArray(node)) count += children.length;
    for (const child of children) if (typeof child === "object" && child !== null) stack.push(child);
  }
  return count;
}

/** How many keys a valid JSON text writes: strings followed by `:`. */
function keysWritten(text: string): number {
  let count = 0;
  // Outside strings a valid JSON text has no `"`: each one found here opens a string.
  for (let start = text.indexOf('"'); start !== -1; start = text.indexOf('"', start + 1)) {
    let end = text.indexOf('"', start + 1);
    while (isEscaped(text, end)) end = text.indexOf('"', end + 1);
    let next = end + 1;
    while (/[ \t\r\n]/.test(text.charAt(next))) next++;
    if (text.charCodeAt(next) === COLON) count++;
    start = end;
  }
  return count;
}

/** Whether the character at `at` follows an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/** A plain YAML file, read by js-yaml when nothing in it is read differently by the two. */
export function parsePlainYaml(text: string): unknown {
  if (SPECIAL.test(text) || NULL_KEY.test(text) || !linesAgree(text)) return undefined;
  let value: unknown;
  try {
    value = load(text, { schema: CORE });
  } catch {
    return undefined; // a syntax error or a duplicate key: the yaml path says where
  }
  // Empty (or only comments): the yaml path tells an empty file from one holding `null`.
  if (value === null || value === undefined) return undefined;
  return value;
}

/** `yaml` refuses an implicit key longer than this; js-yaml does not. */
const MAX_LINE = 1024;

/**
 * Whether each line stands alone and each `- ` item starts at the column of its sequence:
 *
 * - every quoted scalar and flow collection a line opens closes on it, lines end with \n or
 *   \r\n, and none is longer than an implicit key may be. Where a construct spans lines,
 *   js-yaml accepts indentation and line breaks that `yaml` reports as errors;
 * - js-yaml takes an item between two open sequences' columns (`- - a` then ` - b`) into one
 *   of them, `yaml` reports it.
 *
 * Files that fail take the `yaml` path. Quotes inside plain words and brackets in block scalars
 * may give false for a file the two would read alike: that only costs the slower path.
 */
export function linesAgree(text: string): boolean {
  const sequences: number[] = []; // the columns of the open sequences' `-`, innermost last
  let depth = 0;
  let quote = 0;
  let prev = SPACE;
  for (let lineStart = 0, i = 0; i <= text.length; i++) {
    if (i === lineStart) {
      i = lineStartEnd(text, i, sequences);
      if (i < 0) return false;
      prev = SPACE;
    }
    const c = i < text.length ? text.charCodeAt(i) : NL;
    switch (c) {
      case CR:
        if (text.charCodeAt(i + 1) !== NL) return false; // a lone \r breaks lines in js-yaml only
        break;
      case NL:
        if (depth !== 0 || quote !== 0 || i - lineStart > MAX_LINE) return false;
        lineStart = i + 1;
        break;
      case HASH:
        if (quote === 0 && (prev === SPACE || prev === TAB)) {
          const end = text.indexOf("\n", i); // a comment: on to the line's end
          i = (end === -1 ? text.length : end) - 1;
        }
        break;
      case BACKSLASH:
        if (quote === DOUBLE) i++;
        break;
      case SINGLE:
      case DOUBLE:
        if (quote === 0 && (prev === SPACE || prev === TAB || prev === OPEN_LIST || prev === OPEN_MAP || prev === COMMA || prev === COLON))
          quote = c;
        else if (c === quote && c === SINGLE && text.charCodeAt(i + 1) === SINGLE) i++;
        else if (c === quote) quote = 0;
        break;
      case 91: // [
      case 123: // {
        if (quote === 0) depth++;
        break;
      case 93: // ]
      case 125: // }
        if (quote === 0) depth--;
        break;
    }
    prev = c;
  }
  return depth === 0 && quote === 0;
}

/**
 * At the start of a line: checks its `- ` items against the open sequences (see linesAgree) and
 * returns where its content starts, or -1.
 */
function lineStartEnd(text: string, start: number, sequences: number[]): number {
  let i = start;
  while (text.charCodeAt(i) === SPACE) i++;
  const indent = i - start;
  const first = text.charCodeAt(i);
  if (first === NL || first === CR || first === HASH || i >= text.length) return i;
  if (!isDash(text, i)) {
    while (sequences.length > 0 && sequences.at(-1)! >= indent) sequences.pop(); // a key ends deeper sequences
    return i;
  }
  const before = sequences.length;
  while (sequences.length > 0 && sequences.at(-1)! > indent) sequences.pop();
  if (sequences.length < before && (sequences.length === 0 || sequences.at(-1)! < indent)) return -1;
  if (sequences.at(-1) !== indent) sequences.push(indent);
  // `- - a`: each further dash opens a sequence at its own column.
  for (i++; ;) {
    while (text.charCodeAt(i) === SPACE) i++;
    if (!isDash(text, i)) return i;
    sequences.push(i - start);
    i++;
  }
}

/** A `-` item indicator: followed by a space or the line's end. */
function isDash(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== DASH) return false;
  const next = text.charCodeAt(at + 1);
  return next === SPACE || next === NL || next === CR || Number.isNaN(next);
}
