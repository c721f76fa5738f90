/**
 * Values derived from an evaluation outcome, for one flag. A flag hands out a handful of shared,
 * frozen outcomes (engine/answers.ts), so comparing with those seen costs less than a WeakMap
 * lookup, which hashes the object; the memo goes away with whatever holds it (a plan, a count).
 * Outcomes made per evaluation (errors) are not remembered, nor any past MAX_REMEMBERED (a flag
 * with many variants): those are derived again each time.
 */
export class OutcomeMemo<V> {
  static readonly MAX_REMEMBERED = 16;
  readonly #outcomes: object[] = [];
  readonly #values: V[] = [];

  /** The value remembered for `outcome`, if any. */
  get(outcome: object): V | undefined {
    const outcomes = this.#outcomes;
    for (let i = 0; i < outcomes.length; i++) if (outcomes[i] === outcome) return this.#values[i];
    return undefined;
  }

  /** Remembers `value` for `outcome` when it can (see above). */
  remember(outcome: object, value: V): void {
    if (Object.isFrozen(outcome) && this.#outcomes.length < OutcomeMemo.MAX_REMEMBERED) {
      this.#outcomes.push(outcome);
      this.#values.push(value);
    }
  }
}
