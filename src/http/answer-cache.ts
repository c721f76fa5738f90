/**
 * A bounded cache of computed answers by request text, least recently used first out. Answers
 * that may read the clock are kept with the Unix second they were computed in and count as
 * missing in any other second (see engine/clock.ts).
 */
import { murmur3Utf8Concat } from "../engine/index.js";

/** Longer request bodies are answered but not kept: one request must not evict hundreds. */
export const MAX_CACHED_REQUEST_BYTES = 4 * 1024;

/** Length-prefixed: no scope and request pair can spell another's. */
const keyOf = (scope: string, request: string): string => `${scope.length}:${scope}${request}`;

interface Entry<T> {
  answer: T;
  second: number;
  size: number;
}

export class AnswerCache<T> {
  /** By keyOf(scope, request). */
  #entries = new Map<string, Entry<T>>();
  /**
   * The last entry in #entries, with its scope and request. Clients repeat their last request:
   * comparing with it costs less than building and hashing the key, and needs no reordering.
   */
  #newest: Entry<T> | undefined;
  #newestScope = "";
  #newestRequest = "";
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
    if (newest !== undefined && this.#newestRequest === request && this.#newestScope === scope && newest.second === second) return newest.answer;
    if (!this.#keeps(scope, request)) return undefined;
    const key = keyOf(scope, request);
    const hit = this.#entries.get(key);
    if (hit === undefined || hit.second !== second) return undefined;
    // A Map keeps insertion order: moving a hit to the end keeps the oldest first.
    this.#entries.delete(key);
    this.#entries.set(key, hit);
    this.#setNewest(hit, scope, request);
    return hit.answer;
  }

  /** Keeps `answer` for `request` within `scope` in `second` (see `get`), from its second time with `seenRequests`. */
  set(scope: string, request: string, second: number, answer: T): void {
    if (!this.#keeps(scope, request)) return;
    const key = keyOf(scope, request);
    if (this.seenRequests > 0 && !this.#entries.has(key) && this.#firstTime(scope, request)) return;
    this.#set(key, { answer, second, size: key.length * 2 + this.sizeOf(answer) + 64 }, scope, request);
  }

  /** True the first time a request comes (it is remembered), false the second (it is forgotten). */
  #firstTime(scope: string, request: string): boolean {
    // Seeded with the scope's length, as keyOf prefixes it; shifted to a small integer, which
    // a Set holds without allocating.
    const hash = murmur3Utf8Concat(scope, request, scope.length) >> 1;
    const seen = this.#seen;
    if (seen.delete(hash)) return false;
    if (seen.size >= this.seenRequests) seen.clear();
    seen.add(hash);
    return true;
  }

  #keeps(scope: string, request: string): boolean {
    return this.maxBytes > 0 && scope.length + request.length <= MAX_CACHED_REQUEST_BYTES;
  }

  #setNewest(entry: Entry<T> | undefined, scope: string, request: string): void {
    this.#newest = entry;
    this.#newestScope = scope;
    this.#newestRequest = request;
  }

  #set(key: string, entry: Entry<T>, scope: string, request: string): void {
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= old.size;
      if (old === this.#newest) this.#setNewest(undefined, "", "");
    }
    if (entry.size > this.maxBytes) return;
    this.#entries.set(key, entry);
    this.#setNewest(entry, scope, request);
    this.#bytes += entry.size;
    for (const [oldest, { size }] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= size;
    }
  }
}
