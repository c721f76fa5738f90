/**
 * A WeakMap that remembers its last lookup. The request path asks for the same key over and
 * over (the current snapshot's plan, a repeated answer's reply): comparing with the last key
 * costs less than hashing into the map. The last key and value stay reachable until another
 * lookup replaces them, so they must be small, or short-lived.
 */
export class WeakMemo<K extends object, V> {
  readonly #map = new WeakMap<K, V>();
  #lastKey: K | undefined;
  #lastValue: V | undefined;

  get(key: K): V | undefined {
    if (key === this.#lastKey) return this.#lastValue;
    const value = this.#map.get(key);
    // Only a value found is remembered: an absent key is about to be set.
    if (value !== undefined) {
      this.#lastKey = key;
      this.#lastValue = value;
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.set(key, value);
    this.#lastKey = key;
    this.#lastValue = value;
  }
}
