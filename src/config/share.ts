/**
 * A new parse of a file sharing every part equal to the last parse's with it, so that the later
 * stages tell "unchanged" by identity (see memo.ts and docs/architecture-config.md); and the
 * same as a list of changes, which is what the parse worker sends back for a big file.
 */
import { isRecord, setOwn } from "../model/json.js";
import type { Steps } from "../model/steps.js";

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
  if (depth >= 4 || !isRecord(last) || !isRecord(next)) return sameData(last, next) ? last : next;
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
 * What changed from `last` to `next`, as the parse worker sends it: `next` with every part equal
 * to `last`'s (down to the depth shareUnchanged shares) left out as `undefined`, which no parsed
 * value holds. `withUnchanged` puts `last`'s parts back.
 */
export function leaveOutUnchanged(last: unknown, next: unknown, depth = 0): unknown {
  if (sameData(last, next)) return undefined;
  if (depth >= 4 || !isRecord(last) || !isRecord(next)) return next;
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(next)) setOwn(changes, key, Object.hasOwn(last, key) ? leaveOutUnchanged(last[key], next[key], depth + 1) : next[key]);
  return changes;
}

/** The value `leaveOutUnchanged(last, next)` was made from, sharing `last`'s unchanged parts (`last` itself when nothing changed). In steps. */
export function* withUnchanged(last: unknown, changes: unknown, depth = 0): Steps<unknown> {
  if (changes === undefined) return last;
  // leaveOutUnchanged went into a mapping exactly when both were mappings.
  if (depth >= 4 || !isRecord(last) || !isRecord(changes)) return changes;
  const keys = Object.keys(changes);
  const value: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    setOwn(value, key, Object.hasOwn(last, key) ? yield* withUnchanged(last[key], changes[key], depth + 1) : changes[key]);
    if (i % SHARED_PER_STEP === SHARED_PER_STEP - 1) yield;
  }
  return value;
}
