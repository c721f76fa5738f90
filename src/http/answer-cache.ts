/**
 * A bounded cache of computed answers by request text, least recently used first out. Answers
 * that may read the clock are kept with the Unix second they were computed in and count as
 * missing in any other second (see engine/clock.ts).
 */

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
   * With `seenBytes`: requests asked for once and not kept. Their answer is kept when they come
   * again: where requests seldom come back (a context per user), keeping every answer would
   * only churn the cache and the heap. Forgotten all at once past `seenBytes`.
   */
  #seen = new Set<string>();
  #seenBytes = 0;
  /**
   * `maxBytes` counts request texts and answers (as `sizeOf` measures them); 0 keeps nothing.
   * `seenBytes` (0: none), the request texts remembered beside them, keeps answers from a
   * request's second time only (see #seen).
   */
  constructor(
    readonly maxBytes: number,
    readonly sizeOf: (answer: T) => number,
    readonly seenBytes = 0,
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

  /** Keeps `answer` for `request` within `scope` in `second` (see `get`), from its second time with `seenBytes`. */
  set(scope: string, request: string, second: number, answer: T): void {
    if (!this.#keeps(scope, request)) return;
    const key = keyOf(scope, request);
    if (this.seenBytes > 0 && !this.#entries.has(key) && this.#firstTime(key)) return;
    this.#set(key, { answer, second, size: key.length * 2 + this.sizeOf(answer) + 64 }, scope, request);
  }

  /** True the first time `key` comes (it is remembered), false the second (it is forgotten). */
  #firstTime(key: string): boolean {
    const seen = this.#seen;
    const size = key.length * 2 + 64;
    if (seen.delete(key)) {
      this.#seenBytes -= size;
      return false;
    }
    if (this.#seenBytes + size > this.seenBytes) {
      seen.clear();
      this.#seenBytes = 0;
    }
    seen.add(key);
    this.#seenBytes += size;
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
