/**
 * Entries kept from one pass to the next (a load, a read of a source): what this pass used, and
 * what the last one left. What a pass did not use is forgotten at its end: one pass's worth is kept.
 */
export class Generation<K, V> {
  #last = new Map<K, V>();
  #now = new Map<K, V>();

  get(key: K): V | undefined {
    return this.#now.get(key) ?? this.#last.get(key);
  }

  set(key: K, value: V): void {
    this.#now.set(key, value);
  }

  end(): void {
    this.#last = this.#now;
    this.#now = new Map();
  }
}
