/**
 * The fastest reader of the fast path: block-style YAML as `yaml.stringify` and most people
 * write it (indented mappings and `- ` lists, one scalar per line), read line by line, several
 * times faster than js-yaml. It reads only what it is certain the `yaml` package reads the same
 * way: block mappings and lists, plain scalars (resolved by core-scalars.ts), quoted scalars on
 * one line, flow collections closed on their line, comments. Anything else (a block scalar, a
 * scalar over lines, an anchor, alias or tag, a tab, a carriage return, a duplicate key, a
 * document marker, unexpected indentation, a number that is not finite) declines the whole text,
 * and the next reader takes it.
 */
import { BACKSLASH, CLOSE_LIST, CLOSE_MAP, COLON, COMMA, DASH, DOT, DOUBLE, HASH, NL, OPEN_LIST, OPEN_MAP, PERCENT, SINGLE, SPACE } from "./char-codes.js";
import { plainScalarValue } from "./core-scalars.js";

/** Thrown inside the reader to decline the text; never leaves this module. */
const DECLINE = Symbol("decline");

/**
 * Characters this reader leaves to the others: tabs and carriage returns (indentation and line
 * breaks the readers treat differently), characters YAML does not allow in a stream, other line
 * breaks (NEL, LS, PS), a BOM inside the text, and surrogates (a lone one is an error).
 */
const UNSUPPORTED = /[\t\r\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uD800-\uDFFF\uFEFF\uFFFE\uFFFF]/;

/** `yaml` refuses an implicit key longer than 1024 characters; kept well under. */
const MAX_KEY = 1000;

/** The value of a block-style YAML text, or undefined when another reader must read it. */
export function parseBlockYaml(text: string): unknown {
  if (UNSUPPORTED.test(text)) return undefined;
  try {
    return new BlockReader(text).document();
  } catch {
    return undefined; // declined, or nested too deep for the stack: the others read it
  }
}

function decline(): never {
  throw DECLINE;
}

/**
 * A value with no infinity or NaN (`.inf`, `.nan`, `1e999`): those are problems, reported by
 * the other readers' path, so that every number this reader gives is finite (see readFast).
 */
function finite(value: unknown): unknown {
  return typeof value === "number" && !Number.isFinite(value) ? decline() : value;
}

/**
 * A cursor over the lines: `at` is where the current node's content starts (after the
 * indentation, or after `- ` for an item's content), `col` its column, `end` the line's end.
 * Blank and comment lines are skipped as lines are taken.
 */
class BlockReader {
  private lineStart = 0;
  private at = 0;
  private col = 0;
  private end = 0;
  private eof = false;
  /** Where a flow collection is being read. */
  private pos = 0;

  constructor(private readonly text: string) {}

  document(): unknown {
    this.takeLine(0);
    if (this.eof) decline(); // empty, or only comments: the yaml path tells them apart
    const value = this.node(this.col);
    if (!this.eof) decline(); // node() gives a mapping or a list, or declines
    return value;
  }

  /** Makes the first line from `from` on that has content current. */
  private takeLine(from: number): void {
    const { text } = this;
    for (let start = from; start < text.length; ) {
      let end = text.indexOf("\n", start);
      if (end === -1) end = text.length;
      let at = start;
      while (text.charCodeAt(at) === SPACE) at++;
      if (at < end && text.charCodeAt(at) !== HASH) {
        if (at === start && isDirectiveOrMarker(text, at)) decline();
        this.lineStart = start;
        this.at = at;
        this.col = at - start;
        this.end = end;
        return;
      }
      start = end + 1;
    }
    this.eof = true;
  }

  private nextLine(): void {
    this.takeLine(this.end + 1);
  }

  /** A mapping or a list starting at the current content, at column `col`. */
  private node(col: number): unknown {
    if (this.isDash(this.at)) return this.list(col);
    if (this.keyColon(this.at) !== -1) return this.mapping(col);
    return decline(); // a scalar on a line of its own (over lines, or a whole document)
  }

  private isDash(at: number): boolean {
    if (this.text.charCodeAt(at) !== DASH) return false;
    const next = this.text.charCodeAt(at + 1);
    return next === SPACE || next === NL || at + 1 >= this.text.length;
  }

  /** The `- ` items of a list whose dashes are at column `col`. */
  private list(col: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      let at = this.at + 1;
      while (this.text.charCodeAt(at) === SPACE) at++;
      if (at >= this.end || this.text.charCodeAt(at) === HASH) items.push(this.nested(col, false));
      else {
        // The item's content on the dash's line: a compact list or mapping, or a scalar.
        this.at = at;
        this.col = at - this.lineStart;
        if (this.isDash(at) || this.keyColon(at) !== -1) items.push(this.node(this.col));
        else {
          items.push(this.scalar(at));
          this.nextLine();
        }
      }
      if (this.eof || this.col < col || (this.col === col && !this.isDash(this.at))) return items;
      if (this.col > col) decline();
    }
  }

  /** The entries of a mapping whose keys are at column `col`. */
  private mapping(col: number): Record<string, unknown> {
    const record: Record<string, unknown> = {};
    for (;;) {
      const colon = this.keyColon(this.at);
      if (colon === -1) decline();
      const key = this.key(this.at, colon);
      // A duplicate (`yaml` reports it) or a key that would set the prototype: the yaml path.
      if (key === "__proto__" || Object.hasOwn(record, key)) decline();
      let at = colon + 1;
      while (this.text.charCodeAt(at) === SPACE) at++;
      if (at >= this.end || this.text.charCodeAt(at) === HASH) record[key] = this.nested(col, true);
      else {
        record[key] = this.scalar(at);
        this.nextLine();
      }
      if (this.eof || this.col < col) return record;
      if (this.col > col || this.isDash(this.at)) decline();
    }
  }

  /**
   * The value under a key or dash with nothing after it on its line: a node indented deeper, a
   * list at the key's own column (`key:` then `- item`), or null.
   */
  private nested(col: number, underKey: boolean): unknown {
    this.nextLine();
    if (this.eof) return null;
    if (this.col > col) return this.node(this.col);
    if (this.col === col && underKey && this.isDash(this.at)) return this.list(col);
    return null;
  }

  /**
   * Where the `:` of a mapping entry starting at `at` is (followed by a space or the line's
   * end), or -1 when the content is not a mapping entry.
   */
  private keyColon(at: number): number {
    const { text, end } = this;
    const first = text.charCodeAt(at);
    let from = at;
    if (first === OPEN_LIST || first === OPEN_MAP) return -1; // a flow collection (as a key: declined later)
    if (first === DOUBLE || first === SINGLE) {
      from = this.closingQuote(at) + 1;
      while (text.charCodeAt(from) === SPACE) from++;
      return text.charCodeAt(from) === COLON && (from + 1 >= end || text.charCodeAt(from + 1) === SPACE) ? from : -1;
    }
    // Within the line only: indexOf would run on to the next line with a `:` (in a long list of
    // plain items, to the end of the file for each of them).
    for (let i = from; i < end; i++) {
      if (text.charCodeAt(i) === COLON && (i + 1 >= end || text.charCodeAt(i + 1) === SPACE)) return i;
    }
    return -1;
  }

  /** The key written from `at` to `colon`, as the property name `yaml` gives it. */
  private key(at: number, colon: number): string {
    const { text } = this;
    if (colon - at > MAX_KEY) decline();
    const first = text.charCodeAt(at);
    if (first === DOUBLE || first === SINGLE) return this.quoted(at, true);
    let stop = colon;
    while (text.charCodeAt(stop - 1) === SPACE) stop--;
    if (startsSpecial(text, at, stop)) decline();
    const written = text.slice(at, stop);
    // `<<` is a merge key to `yaml` (merge: true); ` #` would start a comment.
    if (written.includes(" #") || written === "<<") decline();
    const value = plainScalarValue(written);
    if (value === null) decline(); // a null key: "" in `yaml`, "null" in js-yaml
    return String(value);
  }

  /** The scalar written from `at` to the line's end (an optional comment after it). */
  private scalar(at: number): unknown {
    const { text, end } = this;
    const first = text.charCodeAt(at);
    if (first === DOUBLE || first === SINGLE) return this.quoted(at, false);
    if (first === OPEN_LIST || first === OPEN_MAP) return this.flow(at);
    let stop = end;
    for (let i = at + 1; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === HASH && text.charCodeAt(i - 1) === SPACE) {
        stop = i; // a comment
        break;
      }
      // `a: b: c` and `a: b:` are errors in `yaml`.
      if (c === COLON && (i + 1 === end || text.charCodeAt(i + 1) === SPACE)) decline();
    }
    while (text.charCodeAt(stop - 1) === SPACE) stop--;
    if (startsSpecial(text, at, stop)) decline();
    return finite(plainScalarValue(text.slice(at, stop)));
  }

  /** A quoted scalar on one line, followed by `:` if it is a key, then only spaces or a comment. */
  private quoted(at: number, isKey: boolean): string {
    const { text } = this;
    const close = this.closingQuote(at);
    let after = close + 1;
    while (text.charCodeAt(after) === SPACE) after++;
    // A key's `:` was found by keyColon; a value's line holds nothing else but a comment.
    const next = text.charCodeAt(after);
    if (!isKey && after < this.end && !(next === HASH && after > close + 1)) decline();
    return this.quotedText(at, close);
  }

  /** The text of the scalar quoted from `at` to `close`. */
  private quotedText(at: number, close: number): string {
    const inner = this.text.slice(at + 1, close);
    if (this.text.charCodeAt(at) === SINGLE) return inner.replaceAll("''", "'");
    return inner.includes("\\") ? jsonEscapes(inner) : inner;
  }

  // ---- flow collections, each closed on the line that opens it -------------------------------

  /** A flow collection from `at`, followed by nothing but spaces or a comment. */
  private flow(at: number): unknown {
    this.pos = at;
    const value = this.flowCollection();
    let after = this.pos;
    while (this.text.charCodeAt(after) === SPACE) after++;
    if (after < this.end && !(this.text.charCodeAt(after) === HASH && after > this.pos)) decline();
    return value;
  }

  /** `[a, b]` or `{k: v}` at this.pos; entries written `a,` with nothing after are left to the others. */
  private flowCollection(): unknown[] | Record<string, unknown> {
    const { text } = this;
    const isList = text.charCodeAt(this.pos) === OPEN_LIST;
    const close = isList ? CLOSE_LIST : CLOSE_MAP;
    const list: unknown[] = [];
    const record: Record<string, unknown> = {};
    this.pos++;
    if (this.flowSpaces() === close) return this.pos++, isList ? list : record;
    for (;;) {
      if (isList) list.push(this.flowValue());
      else {
        const key = this.flowKey();
        if (key === "__proto__" || key === "<<" || Object.hasOwn(record, key)) decline();
        record[key] = this.flowValue();
      }
      const next = this.flowSpaces();
      this.pos++;
      if (next === close) return isList ? list : record;
      if (next !== COMMA || this.flowSpaces() === close) decline(); // a trailing comma too
    }
  }

  /** Skips spaces; the character there (declines at the line's end: the collection is unclosed). */
  private flowSpaces(): number {
    while (this.text.charCodeAt(this.pos) === SPACE) this.pos++;
    if (this.pos >= this.end) decline();
    return this.text.charCodeAt(this.pos);
  }

  /** A value in a flow collection: a collection, a quoted or a plain scalar, not followed by `:`. */
  private flowValue(): unknown {
    const first = this.flowSpaces();
    let value: unknown;
    if (first === OPEN_LIST || first === OPEN_MAP) value = this.flowCollection();
    else if (first === DOUBLE || first === SINGLE) {
      const close = this.closingQuote(this.pos);
      value = this.quotedText(this.pos, close);
      this.pos = close + 1;
    } else value = finite(plainScalarValue(this.flowPlain()));
    // `[a: 1]` (a pair in a list), `{a: b: c}`: left to the others.
    if (this.flowSpaces() === COLON) decline();
    return value;
  }

  /** A key in a flow mapping and its `:` (quoted keys may be followed by `:` at once, as in JSON). */
  private flowKey(): string {
    const { text } = this;
    const first = this.flowSpaces();
    let key: string;
    if (first === DOUBLE || first === SINGLE) {
      const close = this.closingQuote(this.pos);
      key = this.quotedText(this.pos, close);
      this.pos = close + 1;
      if (this.flowSpaces() !== COLON) decline();
    } else {
      const value = plainScalarValue(this.flowPlain());
      if (value === null || text.charCodeAt(this.pos) !== COLON) decline(); // a null key, or `{ a }`
      key = String(value);
    }
    this.pos++;
    return key;
  }

  /** A plain scalar in a flow collection: up to `,`, a bracket, or `:` before a space or one of those. */
  private flowPlain(): string {
    const { text, end } = this;
    const start = this.pos;
    let i = start;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === CLOSE_LIST || c === CLOSE_MAP) break;
      if (c === OPEN_LIST || c === OPEN_MAP || (c === HASH && text.charCodeAt(i - 1) === SPACE)) decline();
      if (c === COLON && isFlowBreak(text.charCodeAt(i + 1))) break;
    }
    let stop = i;
    while (text.charCodeAt(stop - 1) === SPACE) stop--;
    if (startsSpecial(text, start, stop)) decline();
    const written = text.slice(start, stop);
    if (written.length > MAX_KEY) decline();
    this.pos = i;
    return written;
  }

  /** Where the quote opened at `at` closes on its line (declines when it does not). */
  private closingQuote(at: number): number {
    const { text, end } = this;
    const quote = text.charCodeAt(at);
    for (let i = at + 1; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === BACKSLASH && quote === DOUBLE) i++;
      else if (c === quote) {
        if (quote === SINGLE && text.charCodeAt(i + 1) === SINGLE) i++;
        else return i;
      }
    }
    return decline();
  }
}

/**
 * A plain scalar cannot start with an indicator; some of these start other nodes (`[`, `&`,
 * `!`, `|`...), some are errors (`@`), and `-`, `?`, `:` are left to the others altogether,
 * except for `-` before anything but a space (`-1`, `-x`).
 */
function startsSpecial(text: string, at: number, stop: number): boolean {
  if (stop <= at) return true;
  const c = text.charCodeAt(at);
  if (c === DASH) return stop === at + 1 || text.charCodeAt(at + 1) === SPACE;
  return INDICATORS.has(c);
}

const INDICATORS = new Set([..."?:,[]{}#&*!|>'\"%@`"].map((c) => c.charCodeAt(0)));

/** After a `:` in a flow collection: what makes it a key's `:` rather than part of a plain scalar. */
const isFlowBreak = (c: number): boolean => c === SPACE || c === COMMA || c === CLOSE_LIST || c === CLOSE_MAP || Number.isNaN(c) || c === NL;

/** A directive (`%`) or a document marker (`---`, `...`) at a line's start. */
function isDirectiveOrMarker(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c === PERCENT || ((c === DASH || c === DOT) && /^(?:---|\.\.\.)(?:[ \n]|$)/.test(text.slice(at, at + 4)));
}

/** A double-quoted scalar's escapes, when all are JSON's (YAML's others: the other readers). */
function jsonEscapes(inner: string): string {
  if (!/^(?:[^\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*$/.test(inner)) decline();
  return JSON.parse(`"${inner}"`) as string;
}
