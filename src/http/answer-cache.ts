/**
 * A bounded cache of computed answers by request text, least recently used first out. Answers
 * that may read the clock are kept with the Unix second they were computed in and count as
 * missing in any other second (see engine/clock.ts).
 */

/** Longer request bodies are answered but not kept: one request must not evict hundreds. */
export const MAX_CACHED_REQUEST_BYTES = 4 * 1024;

interface Entry<T> {
  answer: T;
  second: number;
  size: number;
}

export class AnswerCache<T> {
  #entries = new Map<string, Entry<T>>();
  /** The last entry in #entries: a hit on it needs no reordering (clients repeat their last request). */
  #newest: Entry<T> | undefined;
  #bytes = 0;
  /** `maxBytes` counts request texts and answers (as `sizeOf` measures them); 0 keeps nothing. */
  constructor(
    readonly maxBytes: number,
    readonly sizeOf: (answer: T) => number,
  ) {}

  /**
   * The answer kept for `request` in `second`, else `compute()`'s, kept for next time. A throw
   * from `compute` (an error answer) passes through and is not kept.
   */
  answer(request: string, second: number, compute: () => T): T {
    const cacheable = this.maxBytes > 0 && request.length <= MAX_CACHED_REQUEST_BYTES;
    if (!cacheable) return compute();
    const hit = this.#entries.get(request);
    if (hit && hit.second === second) {
      // A Map keeps insertion order: moving a hit to the end keeps the oldest first.
      if (hit !== this.#newest) {
        this.#entries.delete(request);
        this.#entries.set(request, hit);
        this.#newest = hit;
      }
      return hit.answer;
    }
    const answer = compute();
    this.#set(request, { answer, second, size: request.length * 2 + this.sizeOf(answer) + 64 });
    return answer;
  }

  #set(key: string, entry: Entry<T>): void {
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= old.size;
      if (old === this.#newest) this.#newest = undefined;
    }
    if (entry.size > this.maxBytes) return;
    this.#entries.set(key, entry);
    this.#newest = entry;
    this.#bytes += entry.size;
    for (const [oldest, { size }] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= size;
    }
  }
}
