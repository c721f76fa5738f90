/**
 * Values derived from an evaluation outcome, for one flag (OutcomeMemo) or for every flag of a
 * list (OutcomeTable, one OutcomeMemo per flag).
 * A flag hands out a handful of shared, frozen outcomes (engine/outcomes.ts), so comparing with
 * those seen costs less than a WeakMap lookup, which hashes the object; the values go away with
 * whatever holds the table (a plan, a count).
 * Errors are made per evaluation, but one flag's error is all in its code and details (its key
 * and metadata are the flag's): they are remembered by those. Up to MAX_REMEMBERED of each kind
 * (a flag with many variants, errors that quote the context); past that, values are derived
 * again each time.
 */
import { isEvaluationError, type Evaluation } from "../engine/types.js";

const errorKey = (e: Extract<Evaluation, { errorCode: string }>): string => `${e.errorCode}\n${e.errorDetails}`;

export class OutcomeMemo<V> {
  static readonly MAX_REMEMBERED = 16;
  readonly #outcomes: Evaluation[] = [];
  readonly #values: V[] = [];
  #errors: Map<string, V> | undefined;

  /** The value remembered for `outcome`, if any. */
  get(outcome: Evaluation): V | undefined {
    const outcomes = this.#outcomes;
    for (let i = 0; i < outcomes.length; i++) if (outcomes[i] === outcome) return this.#values[i];
    return this.#errors !== undefined && isEvaluationError(outcome) ? this.#errors.get(errorKey(outcome)) : undefined;
  }

  /** Remembers `value` for `outcome` when it can (see above). */
  remember(outcome: Evaluation, value: V): void {
    if (Object.isFrozen(outcome)) {
      if (this.#outcomes.length < OutcomeMemo.MAX_REMEMBERED) {
        this.#outcomes.push(outcome);
        this.#values.push(value);
      }
    } else if (isEvaluationError(outcome)) {
      const errors = (this.#errors ??= new Map());
      if (errors.size < OutcomeMemo.MAX_REMEMBERED) errors.set(errorKey(outcome), value);
    }
  }
}

/**
 * An OutcomeMemo for each flag of a list, by index: an evaluate-all answer looks up every flag
 * in a row. Each memo is made at its flag's first outcome.
 */
export class OutcomeTable<V> {
  readonly #memos: (OutcomeMemo<V> | undefined)[];
  constructor(flags: number) {
    this.#memos = new Array<OutcomeMemo<V> | undefined>(flags).fill(undefined);
  }

  /** The value remembered for `outcome` of flag `i`, if any. */
  get(i: number, outcome: Evaluation): V | undefined {
    return this.#memos[i]?.get(outcome);
  }

  /** Remembers `value` for `outcome` of flag `i` when it can (see OutcomeMemo). */
  remember(i: number, outcome: Evaluation, value: V): void {
    (this.#memos[i] ??= new OutcomeMemo<V>()).remember(outcome, value);
  }
}
