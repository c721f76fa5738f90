/**
 * A new parse of a file sharing every part equal to the last parse's with it, so that the later
 * stages tell "unchanged" by identity (see memo.ts and docs/architecture-config.md); and the
 * same as a list of changes, which is what the parse worker sends back.
 */
import { editOf, keysOf, recordEdit } from "../model/edits.js";
import { isRecord, setOwn } from "../model/json.js";
import { ITEMS_PER_YIELD, type Steps } from "../model/steps.js";

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
  let sameKeys = keys.length === lastKeys.length;
  const changed: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    // Key order counts: a reordered mapping is a new value (it costs a check, never a wrong answer).
    if (lastKeys[i] !== key) sameKeys = false;
    if (!Object.hasOwn(last, key)) continue;
    const shared = yield* shareUnchanged(last[key], next[key], depth + 1);
    setOwn(next, key, shared);
    if (shared !== last[key]) changed.push(key);
    if (i % ITEMS_PER_YIELD === ITEMS_PER_YIELD - 1) yield;
  }
  if (!sameKeys) return next;
  if (changed.length === 0) return last;
  recordEdit(next, last, changed);
  return next;
}

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
export type Encoded = string | { v: unknown } | { r: Record<string, Encoded | undefined>; k?: readonly string[] };

/** The depth down to which a value is shared (and sent) mapping by mapping. */
const SHARED_DEPTH = 4;

/**
 * `next` as the worker sends it: everything, or with `last` (the value the serving thread holds)
 * what changed from it. Undefined when nothing changed.
 */
export function leaveOutUnchanged(last: unknown, next: unknown, depth = 0, hasLast = true): Encoded | undefined {
  // An edit its maker recorded (reparse.ts) is compared where it changed, not entry by entry.
  const edit = hasLast && depth < SHARED_DEPTH ? editOf(next) : undefined;
  const replaced = edit !== undefined && edit.from === last ? edit.changed : undefined;
  if (replaced === undefined && hasLast && sameData(last, next)) return undefined;
  const whole =
    depth >= SHARED_DEPTH || !isRecord(next) || (hasLast ? !isRecord(last) : !isMany(next) && !Object.values(next).some(isMany));
  if (whole) return jsonCarries(next) ? JSON.stringify(next) : { v: next };
  const keys = replaced ?? Object.keys(next);
  const before = hasLast && isRecord(last) ? last : undefined;
  const entries: Record<string, Encoded | undefined> = {};
  let sent = 0;
  for (const key of keys) {
    const known = before !== undefined && Object.hasOwn(before, key);
    const encoded = leaveOutUnchanged(known ? before[key] : undefined, next[key], depth + 1, known);
    if (encoded === undefined) continue;
    setOwn(entries, key, encoded);
    sent++;
  }
  // A recorded edit keeps the keys where they were; it may replace entries with equal ones.
  if (replaced !== undefined) return sent > 0 ? { r: entries } : undefined;
  const sameKeys = before !== undefined && sameKeyList(Object.keys(before), keys);
  return sameKeys || before === undefined ? { r: entries } : { r: entries, k: keys };
}

/**
 * With nothing to compare with, a mapping is sent as one text unless it, or a mapping in it, has
 * many entries: one flag is one text, and no text is so big that parsing it holds the thread up.
 */
const isMany = (value: unknown): boolean => isRecord(value) && Object.keys(value).length > MANY_ENTRIES;

/** Entries of a mapping sent as one text at most, with nothing to compare with. */
const MANY_ENTRIES = 50;

export const sameKeyList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((key, i) => key === b[i]);

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
  const keys = encoded.k ?? (before ? keysOf(before) : Object.keys(entries));
  const value: Record<string, unknown> = {};
  const changed: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const known = before !== undefined && Object.hasOwn(before, key);
    const shared = Object.hasOwn(entries, key)
      ? yield* withUnchanged(known ? before[key] : undefined, entries[key], depth + 1)
      : before![key];
    setOwn(value, key, shared);
    if (known && shared !== before[key]) changed.push(key);
    if (i % ITEMS_PER_YIELD === ITEMS_PER_YIELD - 1) yield;
  }
  // The same keys as the last value's, some entries sent: the later stages walk those alone.
  if (before !== undefined && encoded.k === undefined) recordEdit(value, before, changed);
  return value;
}
