/**
 * An edit of a file read again where it changed (in the parse worker). A plain YAML file (one the fast path read
 * with js-yaml, fast-parse.ts) is a block mapping whose entries begin at a known column; the
 * text both versions share before the edit leaves the reader in the same state, and once the
 * changed lines are read (as a text of their own) and a line that begins an entry follows, the
 * shared text after the edit is read as before. So the entries the edit touched are read again,
 * with js-yaml and the fast path's own checks, and spliced into the last value, whose other
 * parts are kept as they are (and stay shared, share.ts). Descends into an entry while the edit
 * lies inside one big entry (`flags:`, then one flag). A mapping made with the last one's keys in
 * their places carries an edit record (model/edits.ts) of the entries it replaced, so that what
 * the worker sends back is found without comparing the others.
 *
 * Anything this cannot prove the same as a parse of the whole text (an edit of the line that
 * opens a section, a key the rest of the file also has, an integer key, a line starting with a
 * tab, a document marker, a text the fast path would turn away), an edit that might nest
 * brackets deeper than the room left, and a run of entries so long that reading it costs more
 * than the whole text, give undefined: the caller parses the whole text.
 * test/config/reparse.test.ts compares the two on random edits.
 */
import { DASH, HASH, NL, SPACE, TAB, CR } from "./char-codes.js";
import { parsePlainYaml } from "./fast-parse.js";
import { sameData, sameKeyList } from "./share.js";
import { keysOf, recordEdit } from "../model/edits.js";
import { isRecord, setOwn } from "../model/json.js";

/** An entry this long or longer is descended into when the edit lies inside it; a shorter one is read again whole. */
const DESCEND_CHARS = 4096;

/** What reparseEdit read: the value, and how many characters the reader was given. */
export interface Reparsed {
  value: Record<string, unknown>;
  charsParsed: number;
  /**
   * How much deeper than the last text the new one may nest `[` and `{` at most (counted as
   * shape.ts's textNestingDepth counts): the `[{` the edit wrote and the `]}` it removed.
   */
  nestingGrowth: number;
}

/**
 * The value of `text` as the fast path would read it, sharing every entry the edit did not touch
 * with `lastValue` (the fast path's value of `lastText`, read as YAML, not as JSON); undefined
 * when that cannot be told without reading the whole text. An edit whose `nestingGrowth` would
 * be over `nestingRoom` is declined too, before any of it is parsed: the whole text is then
 * checked for nesting (shape.ts), which the parsers' recursion needs.
 */
export function reparseEdit(lastText: string, lastValue: unknown, text: string, nestingRoom: number): Reparsed | undefined {
  if (!isRecord(lastValue) || startsAsJsonOrBom(lastText) || startsAsJsonOrBom(text)) return undefined;
  const edit = changedRange(lastText, text);
  if (edit === undefined) return { value: lastValue, charsParsed: 0, nestingGrowth: 0 };
  return spliceAt({ lastText, text, edit, lastValue, blockIndent: 0, nestingRoom });
}

/** The part of `text` that differs from `lastText`: [start, end) in `text`, and how much longer `text` is. */
interface Edit {
  start: number;
  end: number;
  delta: number;
}

/** Both texts' common prefix and suffix (not overlapping); undefined when the texts are equal. */
function changedRange(a: string, b: string): Edit | undefined {
  if (a === b) return undefined;
  const shorter = Math.min(a.length, b.length);
  let start = 0;
  // Compared a chunk at a time (a native comparison), then character by character within the chunk that differs.
  for (const chunk of [65536, 4096, 256, 1])
    while (start + chunk <= shorter && a.slice(start, start + chunk) === b.slice(start, start + chunk)) start += chunk;
  let suffix = 0;
  const room = shorter - start;
  for (const chunk of [65536, 4096, 256, 1])
    while (
      suffix + chunk <= room &&
      a.slice(a.length - suffix - chunk, a.length - suffix) === b.slice(b.length - suffix - chunk, b.length - suffix)
    )
      suffix += chunk;
  return { start, end: b.length - suffix, delta: b.length - a.length };
}

interface Level {
  lastText: string;
  text: string;
  edit: Edit;
  /** The mapping whose entries are read (a part of the last value), and the column its entries begin at. */
  lastValue: Record<string, unknown>;
  blockIndent: number;
  nestingRoom: number;
}

/** One line's facts, for the line starting at `at`. */
interface Line {
  start: number;
  /** Index after its \n (or the text's end). */
  next: number;
  indent: number;
  /** Blank, or a comment: neither begins nor ends an entry. */
  empty: boolean;
  /** A `- ` item. */
  dash: boolean;
  /** A tab right after the indentation: not read by columns here. */
  tab: boolean;
}

function lineAt(text: string, start: number): Line {
  const next = lineAfter(text, start);
  let i = start;
  while (text.charCodeAt(i) === SPACE) i++;
  const c = i < next ? text.charCodeAt(i) : NL;
  const after = text.charCodeAt(i + 1);
  return {
    start,
    next,
    indent: i - start,
    empty: c === NL || c === CR || c === HASH || i >= text.length,
    dash: c === DASH && (after === SPACE || after === NL || after === CR || Number.isNaN(after)),
    tab: c === TAB,
  };
}

const lineStartOf = (text: string, at: number): number => text.lastIndexOf("\n", at - 1) + 1;
const startsLine = (text: string, at: number): boolean => at === 0 || text.charCodeAt(at - 1) === NL;
/** Where the line after the one holding `at` starts (or the text's end). */
function lineAfter(text: string, at: number): number {
  const nl = text.indexOf("\n", at);
  return nl === -1 ? text.length : nl + 1;
}

/**
 * Where the first line from `at` (a line's start) on that the scan for a block's end must look at
 * begins: one neither blank nor a comment at `indent`'s column or left of it, or one with a tab
 * (lineAt tells whether it is after the indentation); the text's end when there is none. The
 * lines in between are skipped by native searches, not read one by one: the block of a file's
 * `flags:` is most of the file.
 */
function nextBlockLine(text: string, at: number, indent: number): number {
  if (at >= text.length) return text.length;
  const line = new RegExp(`\\n {0,${indent}}[^ \\r\\n#]`, "g");
  line.lastIndex = at - 1;
  const found = line.exec(text);
  const next = found === null ? text.length : found.index + 1;
  const tab = text.indexOf("\t", at);
  return tab !== -1 && tab < next ? lineStartOf(text, tab) : next;
}

/** A line that begins an entry of the block at `indent`. */
const beginsEntry = (line: Line, indent: number): boolean => !line.empty && !line.tab && !line.dash && line.indent === indent;

function spliceAt(level: Level): Reparsed | undefined {
  const { lastText, text, edit, lastValue, blockIndent } = level;
  // The first entry the edit touches: the nearest line at or before the edit's line that begins an
  // entry in both texts (the lines before the edit's are the same in both).
  const editLine = lineStartOf(text, Math.min(edit.start, text.length));
  let first: Line | undefined;
  let single = true; // no other line of the run is at the block's column
  for (let at = editLine; ; at = lineStartOf(text, at - 1)) {
    const line = lineAt(text, at);
    const shared = line.next <= edit.start;
    const lastLine = shared ? line : lineAt(lastText, at);
    if (line.tab || lastLine.tab) return undefined;
    if (beginsEntry(line, blockIndent) && beginsEntry(lastLine, blockIndent)) {
      first = line;
      break;
    }
    if (!line.empty && line.indent <= blockIndent) {
      if (shared && line.indent < blockIndent) return undefined; // the edit is above this block's first entry
      single = false;
    }
    if (at === 0) return undefined;
  }
  // The end of the last entry the edit touches: the first line after the edit that begins an
  // entry or ends the block, in the shared suffix (where `end - delta` is the same place in the
  // last text), and past the first entry of the last text's run (an insertion replaces none).
  const editEnd = startsLine(text, edit.end) && startsLine(lastText, edit.end - edit.delta) ? edit.end : lineAfter(text, edit.end);
  for (let at = editLine; at < editEnd;) {
    const line = lineAt(text, at);
    if (line.tab) return undefined;
    if (!line.empty && line.indent < blockIndent) return undefined; // a line left of the block, inside the edit
    if (at > first.start && !line.empty && line.indent === blockIndent) single = false;
    at = line.next;
  }
  let end = editEnd;
  while (end < text.length) {
    const line = lineAt(text, end);
    if (line.tab) return undefined;
    if (!line.empty && line.indent <= blockIndent) {
      if (line.dash || (line.indent < blockIndent && end - edit.delta <= first.start)) return undefined; // not one of ours to reason about
      if (end - edit.delta > first.start) break;
      single = false;
    }
    end = nextBlockLine(text, line.next, blockIndent);
  }
  const run = text.slice(first.start, end);
  const lastRun = lastText.slice(first.start, end - edit.delta);
  if (single && run.length >= DESCEND_CHARS && first.next <= edit.start) {
    const inner = descend(level, first, end);
    if (inner !== "here") return inner;
  }
  // Reading both runs would cost more than reading the new text whole.
  if (run.length + lastRun.length > text.length) return undefined;
  return spliceRun(level, lastRun, run);
}

/**
 * The splice one level down, when the edit lies below the key line of one big entry whose value
 * is a block mapping in the last value; "here" when the run is read at this level.
 */
function descend(level: Level, first: Line, end: number): Reparsed | undefined | "here" {
  const { lastText, text, edit, lastValue } = level;
  const keyLine = parsePlainYaml(text.slice(first.start, first.next));
  if (!isRecord(keyLine)) return "here";
  const keys = Object.keys(keyLine);
  if (keys.length !== 1 || keyLine[keys[0]!] !== null) return "here";
  const key = keys[0]!;
  const child = Object.hasOwn(lastValue, key) ? lastValue[key] : undefined;
  if (!isRecord(child)) return "here";
  // The child block's entries begin at the column of its first line, which both texts share up to the character after it.
  let line = lineAt(text, first.next);
  while (line.empty && line.next < end) line = lineAt(text, line.next);
  if (line.start + line.indent + 1 >= edit.start || !beginsEntry(line, line.indent) || line.indent <= level.blockIndent) return "here";
  const inner = spliceAt({ ...level, lastValue: child, blockIndent: line.indent });
  if (inner === undefined) return undefined;
  const value: Record<string, unknown> = {};
  for (const k of keysOf(lastValue)) setOwn(value, k, k === key ? inner.value : lastValue[k]);
  recordEdit(value, lastValue, inner.value === child ? [] : [key]);
  return { ...inner, value, charsParsed: inner.charsParsed + (first.next - first.start) };
}

const INTEGER_KEY = /^(?:0|[1-9][0-9]*)$/;

/**
 * `lastValue`'s entries with those `lastRun` wrote replaced by those `run` writes, in the order
 * the text gives them; undefined when either run is not a mapping the fast path reads, when
 * `lastRun` does not read as the entries it replaces, or when a key of `run` is also written
 * outside it.
 */
function spliceRun({ lastValue, blockIndent, nestingRoom }: Level, lastRun: string, run: string): Reparsed | undefined {
  if (blockIndent === 0 && /^(?:---|\.\.\.)(?:[ \t\r\n]|$)/m.test(run)) return undefined; // a document marker
  const nestingGrowth = count(run, /[[{]/g) + count(lastRun, /[\]}]/g);
  if (nestingGrowth > nestingRoom) return undefined;
  const before = parsePlainYaml(lastRun);
  const after = parsePlainYaml(run);
  if (!isRecord(before) || !isRecord(after)) return undefined;
  const replaced = Object.keys(before);
  const written = Object.keys(after);
  // Integer keys come first in an object whatever the text's order: the run's place would not tell.
  if (replaced.some((k) => INTEGER_KEY.test(k)) || written.some((k) => INTEGER_KEY.test(k))) return undefined;
  const keys = keysOf(lastValue);
  const from = keys.indexOf(replaced[0]!);
  if (from === -1) return undefined;
  for (let i = 0; i < replaced.length; i++) {
    const key = replaced[i]!;
    if (keys[from + i] !== key || !sameData(before[key], lastValue[key])) return undefined;
  }
  const to = from + replaced.length;
  for (const key of written) if (Object.hasOwn(lastValue, key) && !Object.hasOwn(before, key)) return undefined; // a duplicate key
  const value: Record<string, unknown> = {};
  for (let i = 0; i < from; i++) setOwn(value, keys[i]!, lastValue[keys[i]!]);
  for (const key of written) {
    const was = Object.hasOwn(before, key) ? lastValue[key] : undefined;
    setOwn(value, key, was !== undefined && sameData(was, after[key]) ? was : after[key]);
  }
  for (let i = to; i < keys.length; i++) setOwn(value, keys[i]!, lastValue[keys[i]!]);
  if (from + written.length + keys.length - to === 0) return undefined; // nothing left: the whole text says what it is
  // The same keys in the same place: what the edit replaced is recorded (leaveOutUnchanged sends those alone).
  if (sameKeyList(written, replaced))
    recordEdit(
      value,
      lastValue,
      written.filter((key) => value[key] !== lastValue[key]),
    );
  return { value, charsParsed: lastRun.length + run.length, nestingGrowth };
}

const count = (text: string, pattern: RegExp): number => text.match(pattern)?.length ?? 0;

/** JSON is read by JSON.parse on the fast path, and a BOM shifts columns: both are read whole. */
const startsAsJsonOrBom = (text: string): boolean => /^(?:\uFEFF|[ \t\r\n]*[[{])/.test(text);
