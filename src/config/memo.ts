/**
 * What one load keeps for the next, keyed by content, so that an edit costs what it changes
 * (docs/architecture.md, "Reloads"): parses by a document's content, flags and segments by their
 * JSON text (so later stages tell "unchanged" by identity), valid flag values, environments as
 * built, compiles. What a load did not use is dropped at its end: the memo holds one configuration.
 */
import type { CompileMemo } from "../engine/compile.js";
import { Generation } from "../model/generation.js";
import { isRecord, setOwn } from "../model/json.js";
import type { ParsedFile } from "./parse.js";

/** The work a load did (for tests and the benchmark: edits must cost what they change). */
export interface WorkCounts {
  /** Files (or URL bodies) parsed; an unchanged text is not parsed again. */
  filesParsed: number;
  /** Characters (a file's bytes) of those files. */
  charsParsed: number;
  /** Flag definitions checked against the schema and the rules beside it. */
  flagsValidated: number;
  /** Environments validated, merged and compiled (the others were reused whole). */
  environmentsBuilt: number;
  /** Flags whose targeting was compiled (the others were reused). */
  flagsCompiled: number;
}

const zero = (): WorkCounts => ({ filesParsed: 0, charsParsed: 0, flagsValidated: 0, environmentsBuilt: 0, flagsCompiled: 0 });

/** A document's last parse: what it was parsed from, and its flags and segments by their JSON text. */
interface KnownParse {
  /** A file's bytes' hash, or the text a document gave. */
  content: string;
  parsed: ParsedFile;
  entries: ReadonlyMap<string, object>;
}

export class LoadMemo {
  last: WorkCounts = zero();
  #counts: WorkCounts = zero();
  readonly parsed = new Generation<string, KnownParse>();
  readonly environments = new Generation<string, unknown>();
  readonly compiled = new Generation<string, CompileMemo>();
  /** Flag values that passed every document check (schema, variants, finite numbers). */
  readonly validFlags = new WeakSet<object>();

  count(what: keyof WorkCounts, n = 1): void {
    this.#counts[what] += n;
  }

  /** A load is done: its counts become `last`, and what it did not use is dropped. */
  end(): void {
    this.last = this.#counts;
    this.#counts = zero();
    this.parsed.end();
    this.environments.end();
    this.compiled.end();
  }
}

/**
 * `value` (a fresh parse, seen by no one yet) with each flag and segment whose JSON text is that of
 * an entry of `last` (the document's last parse) replaced in place by that object; entries of one
 * text share one object. Returns the new entries, for the next parse.
 */
export const reuseEntries = (value: unknown, last?: ReadonlyMap<string, object>): Map<string, object> =>
  placeEntries(value, undefined, last, (entry) => entry);

/**
 * The parse worker's reply made whole: `skeleton` is the value with each flag and segment
 * replaced by `{}` (takeEntries), `texts` their JSON texts. An entry whose text `last` has is that
 * object, as reuseEntries would make it; only the others are parsed here.
 */
export const fillEntries = (skeleton: unknown, texts: readonly string[], last?: ReadonlyMap<string, object>): Map<string, object> =>
  placeEntries(skeleton, texts, last, (_placeholder, text) => JSON.parse(text) as object);

/** Each entry's text is its JSON, or the worker's `texts` (in the order forEachEntry visits the entries). */
function placeEntries(
  value: unknown,
  texts: readonly string[] | undefined,
  last: ReadonlyMap<string, object> = new Map(),
  make: (entry: object, text: string) => object,
): Map<string, object> {
  const entries = new Map<string, object>();
  let i = 0;
  forEachEntry(value, (section, key, entry) => {
    const text = texts ? texts[i++]! : JSON.stringify(entry);
    const placed = entries.get(text) ?? last.get(text) ?? make(entry, text);
    entries.set(text, placed);
    if (placed !== entry) setOwn(section, key, placed);
  });
  return entries;
}

/**
 * The JSON text of each flag and segment of `value`, each replaced by `{}` in it: what the parse
 * worker sends, so that the server parses only the entries it has not got (fillEntries).
 */
export function takeEntries(value: unknown): string[] {
  const texts: string[] = [];
  forEachEntry(value, (section, key, entry) => {
    texts.push(JSON.stringify(entry));
    setOwn(section, key, {});
  });
  return texts;
}

/**
 * `visit` for every entry that is an object in every `flags:` (a mapping or flagd's list),
 * `segments:` and `$evaluators:` of the value's environment documents.
 */
function forEachEntry(value: unknown, visit: (section: Record<string, unknown>, key: string, entry: object) => void): void {
  if (!isRecord(value)) return;
  const docs = isRecord(value.environments) ? Object.values(value.environments) : [value];
  for (const doc of docs) {
    if (!isRecord(doc)) continue;
    for (const name of ["flags", "segments", "$evaluators"]) {
      const section = doc[name];
      if (!isRecord(section) && !Array.isArray(section)) continue;
      for (const key of Object.keys(section)) {
        const entry = (section as Record<string, unknown>)[key];
        if (typeof entry === "object" && entry !== null) visit(section as Record<string, unknown>, key, entry);
      }
    }
  }
}
