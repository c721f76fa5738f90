/**
 * Entries kept from one pass to the next (a load, a read of a source): what this pass used, and
 * what the last one left. Entries the pass did not use are forgotten at its end, so what is kept
 * is one pass's worth.
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
