/**
 * What one load keeps for the next, so that an edit costs what it changes (see
 * docs/architecture-config.md, "How an edit flows"). Everything is keyed by content:
 * - a file's text -> its parse (an unchanged file is not parsed again);
 * - a changed file's new value shares every flag, segment and metadata entry that is equal to
 *   the last value's with it (`shareUnchanged`), so later stages can tell "unchanged" by identity;
 * - a flag value found valid -> not validated again (a WeakSet: it lives as long as the value);
 * - an environment's documents (by identity) and the variables its notifications name -> the
 *   environment as built last time (problems included), reused whole;
 * - an environment's last compile (engine/compile.ts's CompileMemo): flags whose definition is
 *   the same object and whose segments did not change are not compiled again.
 * Entries not used by a load are dropped at its end: the memo holds one configuration.
 */
import type { CompileMemo } from "../engine/compile.js";
import { isRecord, setOwn } from "../model/json.js";
import type { Steps } from "../model/steps.js";
import type { ParsedFile } from "./parse.js";

/** The work a load did (for tests and the benchmark: edits must cost what they change). */
export interface WorkCounts {
  /** Files (or URL bodies) parsed; an unchanged text is not parsed again. */
  filesParsed: number;
  /** Flag definitions checked against the schema and the rules beside it. */
  flagsValidated: number;
  /** Environments validated, merged and compiled (the others were reused whole). */
  environmentsBuilt: number;
  /** Flags whose targeting was compiled (the others were reused). */
  flagsCompiled: number;
}

const zero = (): WorkCounts => ({ filesParsed: 0, flagsValidated: 0, environmentsBuilt: 0, flagsCompiled: 0 });

/** One generation of keyed entries: what this load used, and what the last one left. */
class Generation<K, V> {
  #last = new Map<K, V>();
  #now = new Map<K, V>();

  get(key: K): V | undefined {
    return this.#now.get(key) ?? this.#last.get(key);
  }

  set(key: K, value: V): void {
    this.#now.set(key, value);
  }

  /** Entries this load did not use are forgotten. */
  end(): void {
    this.#last = this.#now;
    this.#now = new Map();
  }
}

export class LoadMemo {
  /** Work done by the last load. */
  last: WorkCounts = zero();
  /** Work done since this memo was made. */
  readonly total: WorkCounts = zero();
  #counts: WorkCounts = zero();
  readonly parsed = new Generation<string, { text: string; parsed: ParsedFile }>();
  readonly environments = new Generation<string, unknown>();
  readonly compiled = new Generation<string, CompileMemo>();
  /** Flag values that passed every document check (schema, variants, finite numbers). */
  readonly validFlags = new WeakSet<object>();

  count(what: keyof WorkCounts, n = 1): void {
    this.#counts[what] += n;
    this.total[what] += n;
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

/** Deep equality of plain data (what parsing gives). */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameData(item, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const key = ka[i]!;
    // Key order counts: a reordered mapping is a new value (it costs a check, never a wrong answer).
    if (key !== kb[i] || !sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * `next` (a fresh parse, not yet seen by anyone) with every part that equals the last parse's
 * replaced by the last one's object, down to the entries of an environment's sections (root ->
 * `environments:` -> an environment -> `flags:` -> one flag). Returns what to use: `last`
 * itself when nothing changed. In steps: a big file's flags are compared a few hundred at a
 * time, with the event loop free in between.
 */
export function* shareUnchanged(last: unknown, next: unknown, depth = 0): Steps<unknown> {
  if (last === next) return last;
  if (depth >= SHARED_DEPTH || !isRecord(last) || !isRecord(next)) return sameData(last, next) ? last : next;
  const keys = Object.keys(next);
  const lastKeys = Object.keys(last);
  let same = keys.length === lastKeys.length;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!Object.hasOwn(last, key)) {
      same = false;
      continue;
    }
    const shared = yield* shareUnchanged(last[key], next[key], depth + 1);
    setOwn(next, key, shared);
    // Key order counts: a reordered mapping is a new value (it costs a check, never a wrong answer).
    if (shared !== last[key] || lastKeys[i] !== key) same = false;
    if (i % SHARED_PER_STEP === SHARED_PER_STEP - 1) yield;
  }
  return same ? last : next;
}

/** Entries of one mapping compared between two yields of shareUnchanged. */
const SHARED_PER_STEP = 500;

/**
 * A parsed value as the parse worker sends it back (`leaveOutUnchanged`), read on the serving
 * thread by `withUnchanged` in steps. Copying a 2 MB object graph between threads is read in one
 * go on arrival; strings are cheap to copy, so the parts below the depth shareUnchanged shares
 * (one flag, segment or metadata entry, or a part of one) travel as JSON text, parsed one at a
 * time. Down to that depth a mapping is `{ r, k? }`: its entries (only the changed ones when
 * there is a last value) and its keys in order when they are not the last value's. Parts equal
 * to the last value's are left out; a part JSON cannot carry as it is (`.inf`, `.nan`, `-0`)
 * travels as `{ v }`.
 */
export type Encoded = string | { v: unknown } | { r: Record<string, Encoded | undefined>; k?: string[] };

/** The depth down to which a value is shared (and sent) mapping by mapping. */
const SHARED_DEPTH = 4;

/**
 * `next` as the worker sends it: everything, or with `last` (the value the serving thread holds)
 * what changed from it. Undefined when nothing changed.
 */
export function leaveOutUnchanged(last: unknown, next: unknown, depth = 0, hasLast = true): Encoded | undefined {
  if (hasLast && sameData(last, next)) return undefined;
  const whole = depth >= SHARED_DEPTH || !isRecord(next) || (hasLast ? !isRecord(last) : !isMany(next) && !Object.values(next).some(isMany));
  if (whole) return jsonCarries(next) ? JSON.stringify(next) : { v: next };
  const keys = Object.keys(next);
  const before = hasLast && isRecord(last) ? last : undefined;
  const entries: Record<string, Encoded | undefined> = {};
  for (const key of keys) {
    const known = before !== undefined && Object.hasOwn(before, key);
    const encoded = leaveOutUnchanged(known ? before[key] : undefined, next[key], depth + 1, known);
    if (encoded !== undefined) setOwn(entries, key, encoded);
  }
  const sameKeys = before !== undefined && sameKeyList(Object.keys(before), keys);
  return sameKeys || before === undefined ? { r: entries } : { r: entries, k: keys };
}

/**
 * With nothing to compare with, a mapping is sent as one text unless it, or a mapping in it, has
 * many entries: one flag is one text, and no text is so big that parsing it holds the thread up.
 */
const isMany = (value: unknown): boolean => isRecord(value) && Object.keys(value).length > SHARED_PER_STEP / 10;

const sameKeyList = (a: string[], b: string[]): boolean => a.length === b.length && a.every((key, i) => key === b[i]);

/** Whether JSON text gives this value back as it is (parsed data: no undefined, no functions). */
function jsonCarries(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== "object" || value === null) return true;
  if (Array.isArray(value)) return value.every(jsonCarries);
  for (const key of Object.keys(value)) if (!jsonCarries((value as Record<string, unknown>)[key])) return false;
  return true;
}

/**
 * The value `leaveOutUnchanged(last, next)` was made from, sharing `last`'s unchanged parts
 * (`last` itself when nothing changed; `last` undefined when everything was sent). In steps: a
 * few hundred entries of a mapping, each a JSON text to parse, between two yields.
 */
export function* withUnchanged(last: unknown, encoded: Encoded | undefined, depth = 0): Steps<unknown> {
  if (encoded === undefined) return last;
  if (typeof encoded === "string") return JSON.parse(encoded) as unknown;
  if ("v" in encoded) return encoded.v;
  const before = isRecord(last) ? last : undefined;
  const { r: entries } = encoded;
  const keys = encoded.k ?? (before ? Object.keys(before) : Object.keys(entries));
  const value: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const known = before !== undefined && Object.hasOwn(before, key);
    const shared = Object.hasOwn(entries, key) ? yield* withUnchanged(known ? before[key] : undefined, entries[key], depth + 1) : before![key];
    setOwn(value, key, shared);
    if (i % SHARED_PER_STEP === SHARED_PER_STEP - 1) yield;
  }
  return value;
}
