/**
 * A bounded cache of computed answers by request text, least recently used first out. Answers
 * that may read the clock are kept with the Unix second they were computed in and count as
 * missing in any other second (see engine/clock.ts).
 */
import { murmur3Utf8Concat } from "../engine/index.js";

/** Longer request bodies are answered but not kept: one request must not evict hundreds. */
export const MAX_CACHED_REQUEST_BYTES = 4 * 1024;

/**
 * Entries are found by a hash of the scope and request, then checked against both: a request is
 * hashed once however often it is looked up, and no key text is built, flattened and hashed again
 * for every lookup. Seeded with the scope's length, so a scope and request pair that spells
 * another's text does not collide with it; shifted to a small integer, which a Map or Set holds
 * without allocating. Two requests with one hash take turns in one entry.
 */
const hashOf = (scope: string, request: string): number => murmur3Utf8Concat(scope, request, scope.length) >> 1;

interface Entry<T> {
  scope: string;
  request: string;
  answer: T;
  second: number;
  size: number;
}

export class AnswerCache<T> {
  /** By hashOf(scope, request). */
  #entries = new Map<number, Entry<T>>();
  /**
   * The last entry in #entries. Clients repeat their last request: comparing with it costs less
   * than hashing it, and needs no reordering.
   */
  #newest: Entry<T> | undefined;
  /** The request last hashed, and its hash: a miss hashes it in `get`, then `set` keeps it. */
  #hashedScope = "";
  #hashedRequest = "";
  #hash = hashOf("", "");
  #bytes = 0;
  /**
   * With `seenRequests`: hashes of the requests asked for once and not kept. Their answer is
   * kept when they come again: where requests seldom come back (a context per user), keeping
   * every answer would only churn the cache and the heap. Hashes, not the request texts: a text
   * held for thousands of requests outlives the young generation, and each one promoted costs a
   * full collection later. Two requests with one hash only get an answer kept a request early.
   * Forgotten all at once past `seenRequests`.
   */
  #seen = new Set<number>();
  /**
   * `maxBytes` counts request texts and answers (as `sizeOf` measures them); 0 keeps nothing.
   * `seenRequests` (0: none), the requests remembered beside them, keeps answers from a
   * request's second time only (see #seen).
   */
  constructor(
    readonly maxBytes: number,
    readonly sizeOf: (answer: T) => number,
    readonly seenRequests = 0,
  ) {}

  /**
   * The answer kept for `request` within `scope` (what else it depends on, such as the flag
   * asked for) in `second`, else undefined: compute it and `set` it. An error answer (a throw
   * while computing) is simply never set.
   */
  get(scope: string, request: string, second: number): T | undefined {
    const newest = this.#newest;
    if (newest !== undefined && newest.request === request && newest.scope === scope && newest.second === second) return newest.answer;
    if (!this.#keeps(scope, request)) return undefined;
    const hash = this.#hashOf(scope, request);
    const hit = this.#entries.get(hash);
    if (hit === undefined || hit.second !== second || hit.request !== request || hit.scope !== scope) return undefined;
    // A Map keeps insertion order: moving a hit to the end keeps the oldest first.
    this.#entries.delete(hash);
    this.#entries.set(hash, hit);
    this.#newest = hit;
    return hit.answer;
  }

  /** Keeps `answer` for `request` within `scope` in `second` (see `get`), from its second time with `seenRequests`. */
  set(scope: string, request: string, second: number, answer: T): void {
    if (!this.#keeps(scope, request)) return;
    const hash = this.#hashOf(scope, request);
    const old = this.#entries.get(hash);
    const known = old !== undefined && old.request === request && old.scope === scope;
    if (this.seenRequests > 0 && !known && this.#firstTime(hash)) return;
    const size = (scope.length + request.length) * 2 + this.sizeOf(answer) + 64;
    this.#set(hash, { scope, request, answer, second, size }, old);
  }

  #hashOf(scope: string, request: string): number {
    if (request !== this.#hashedRequest || scope !== this.#hashedScope) {
      this.#hash = hashOf(scope, request);
      this.#hashedScope = scope;
      this.#hashedRequest = request;
    }
    return this.#hash;
  }

  /** True the first time a request comes (it is remembered), false the second (it is forgotten). */
  #firstTime(hash: number): boolean {
    const seen = this.#seen;
    if (seen.delete(hash)) return false;
    if (seen.size >= this.seenRequests) seen.clear();
    seen.add(hash);
    return true;
  }

  #keeps(scope: string, request: string): boolean {
    return this.maxBytes > 0 && scope.length + request.length <= MAX_CACHED_REQUEST_BYTES;
  }

  /** Puts `entry` in place of `old`, the entry under `hash` if any (a request of the same hash). */
  #set(hash: number, entry: Entry<T>, old: Entry<T> | undefined): void {
    if (old) {
      this.#entries.delete(hash);
      this.#bytes -= old.size;
      if (old === this.#newest) this.#newest = undefined;
    }
    if (entry.size > this.maxBytes) return;
    this.#entries.set(hash, entry);
    this.#newest = entry;
    this.#bytes += entry.size;
    for (const [oldest, { size }] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= size;
    }
  }
}
