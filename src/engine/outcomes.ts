import type { CompiledFlag, Evaluation, EvaluationErrorCode, Reason } from "./types.js";

/**
 * Every outcome a flag can have without an error of its rule, built once per compiled flag, on
 * its first evaluation. A flag's successes differ only in reason and variant, so an evaluation
 * hands out one of these shared, frozen objects instead of allocating its own (an evaluation
 * pass used to allocate one per flag).
 */
export interface FlagOutcomes {
  disabled: Evaluation;
  /** The defaultVariant as STATIC: the outcome of a flag without targeting. */
  static: Evaluation;
  /** The defaultVariant as DEFAULT: the rule returned null (or nothing). */
  default: Evaluation;
  /** By variant key: the rule named the variant... */
  match: VariantOutcomes;
  /** ...by way of the last `fractional` it ran. */
  split: VariantOutcomes;
}

/** Past this many variants, a flag's outcomes are found by hashing the key rather than comparing keys. */
const MAX_COMPARED = 8;

/**
 * A flag's outcomes by variant key. Most flags have two to a few variants, and a rule names them
 * with the very strings of its text: comparing keys costs less than hashing one, which an
 * evaluation pass did for every targeted flag.
 */
export class VariantOutcomes {
  /** Key, outcome, key, outcome...: one array to read (empty when the keys are hashed). */
  readonly #pairs: readonly (string | Evaluation)[];
  readonly #byKey: ReadonlyMap<string, Evaluation> | undefined;
  constructor(entries: readonly (readonly [string, Evaluation])[]) {
    const hashed = entries.length > MAX_COMPARED;
    this.#pairs = hashed ? [] : entries.flat();
    this.#byKey = hashed ? new Map(entries) : undefined;
  }

  get(variant: string): Evaluation | undefined {
    if (this.#byKey !== undefined) return this.#byKey.get(variant);
    const pairs = this.#pairs;
    for (let at = 0; at < pairs.length; at += 2) if (pairs[at] === variant) return pairs[at + 1] as Evaluation;
    return undefined;
  }
}

export const failure = (flag: CompiledFlag, errorCode: EvaluationErrorCode, errorDetails: string): Evaluation => ({
  key: flag.key,
  errorCode,
  errorDetails,
  metadata: flag.metadata,
});

const resolved = (flag: CompiledFlag, reason: Reason, variant: string): Evaluation =>
  Object.hasOwn(flag.variants, variant)
    ? { key: flag.key, reason, variant, value: flag.variants[variant]!, metadata: flag.metadata }
    : failure(flag, "GENERAL", `variant "${variant}" is not defined in flag "${flag.key}"`);

/** The defaultVariant with `reason`, or DEFAULT without a value when the flag has none (code default). */
const fallback = (flag: CompiledFlag, reason: Reason): Evaluation =>
  flag.defaultVariant === null
    ? { key: flag.key, reason: "DEFAULT", metadata: flag.metadata }
    : resolved(flag, reason, flag.defaultVariant);

const byVariant = (flag: CompiledFlag, reason: Reason): VariantOutcomes =>
  new VariantOutcomes(Object.keys(flag.variants).map((variant) => [variant, Object.freeze(resolved(flag, reason, variant))]));

export function buildOutcomes(flag: CompiledFlag): FlagOutcomes {
  return Object.freeze({
    disabled: Object.freeze({ key: flag.key, reason: "DISABLED", metadata: flag.metadata }),
    static: Object.freeze(fallback(flag, "STATIC")),
    default: Object.freeze(fallback(flag, "DEFAULT")),
    match: byVariant(flag, "TARGETING_MATCH"),
    split: byVariant(flag, "SPLIT"),
  });
}

/**
 * Where a compiled flag keeps its outcomes: a non-enumerable symbol key, so copies made by
 * spreading the flag (an override's flag, with another defaultVariant) do not carry outcomes
 * built for another flag, and JSON and deep equality never see it. It holds a slot, filled on the
 * flag's first evaluation: building every flag's outcomes when a file is loaded cost about as
 * much as compiling its rules, before the first answer, for flags perhaps never asked.
 */
const OUTCOMES: unique symbol = Symbol("flagserve.outcomes");

interface OutcomesSlot {
  outcomes?: FlagOutcomes;
}

/** Gives `flag` a slot for its outcomes; the flag must not change afterwards (freeze it next). */
export function attachOutcomes(flag: CompiledFlag): void {
  Object.defineProperty(flag, OUTCOMES, { value: {} satisfies OutcomesSlot });
}

/** FlagOutcomes of frozen flags built elsewhere (copies, hand-made flags), built on first use. */
const lateOutcomes = new WeakMap<CompiledFlag, FlagOutcomes>();

export function outcomesOf(flag: CompiledFlag): FlagOutcomes {
  const own = (flag as { [OUTCOMES]?: OutcomesSlot })[OUTCOMES];
  if (own !== undefined) return (own.outcomes ??= buildOutcomes(flag));
  if (!Object.isFrozen(flag)) return buildOutcomes(flag); // it may still change: nothing to keep
  let outcomes = lateOutcomes.get(flag);
  if (outcomes === undefined) lateOutcomes.set(flag, (outcomes = buildOutcomes(flag)));
  return outcomes;
}
