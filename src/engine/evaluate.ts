import type { JsonValue } from "../model/types.js";
import { describeThrown, TargetingKeyMissingError, TargetingParseError } from "./errors.js";
import { evaluationData, newScratch, rebind, type EvaluationData, type Scratch } from "./scratch.js";
import type { CompiledFlag, CompiledRule, Evaluation, EvaluationErrorCode, Reason } from "./types.js";

/**
 * The variant key a rule's result names, as flagd does: strings as is, booleans and numbers by
 * their JSON text ("true", "false", "1", "0.5"). undefined for anything else.
 */
function variantKeyOf(result: unknown): string | undefined {
  if (typeof result === "string") return result;
  if (typeof result === "boolean") return String(result);
  if (typeof result === "number" && Number.isFinite(result)) return JSON.stringify(result);
  return undefined;
}

function describeResult(result: unknown): string {
  try {
    const text = JSON.stringify(result);
    if (text !== undefined) return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    // fall through
  }
  return typeof result;
}

const failure = (flag: CompiledFlag, errorCode: EvaluationErrorCode, errorDetails: string): Evaluation => ({
  key: flag.key,
  errorCode,
  errorDetails,
  metadata: flag.metadata,
});

const resolved = (flag: CompiledFlag, reason: Reason, variant: string): Evaluation =>
  Object.hasOwn(flag.variants, variant)
    ? { key: flag.key, reason, variant, value: flag.variants[variant] as JsonValue, metadata: flag.metadata }
    : failure(flag, "GENERAL", `variant "${variant}" is not defined in flag "${flag.key}"`);

/** The defaultVariant with `reason`, or DEFAULT without a value when the flag has none (code default). */
const fallback = (flag: CompiledFlag, reason: Reason): Evaluation =>
  flag.defaultVariant === null
    ? { key: flag.key, reason: "DEFAULT", metadata: flag.metadata }
    : resolved(flag, reason, flag.defaultVariant);

/**
 * Evaluate one flag for one context (design §4). Pure: the result depends only on the arguments.
 * `context` holds the attributes (see contextAttributes); `nowMs` feeds `$flagd.timestamp`.
 *
 * SPLIT rule: the reason is SPLIT when at least one `fractional` ran during this evaluation and
 * the rule's result is (===) the value the last `fractional` call returned; otherwise a variant
 * returned by the rule is TARGETING_MATCH. (flagd itself reports TARGETING_MATCH for both.)
 */
export const evaluate = (flag: CompiledFlag, context: Record<string, unknown>, nowMs: number = Date.now()): Evaluation =>
  evaluatorFor(context, nowMs)(flag);

/**
 * `evaluate` for any number of flags and one context: the evaluation data (a copy of the
 * context) is built on the first targeted flag and reused by the next ones, with their own
 * `$flagd.flagKey` and scratch record. Safe because evaluation is synchronous and no operator
 * writes to the data or keeps it.
 */
export function evaluatorFor(context: Record<string, unknown>, nowMs: number = Date.now()): (flag: CompiledFlag) => Evaluation {
  let data: EvaluationData | undefined;
  return (flag) => {
    if (flag.state === "DISABLED") return { key: flag.key, reason: "DISABLED", metadata: flag.metadata };
    if (!flag.rule) return fallback(flag, "STATIC");
    const scratch = newScratch();
    data = data ? rebind(data, flag.key, scratch) : evaluationData(context, flag.key, nowMs, scratch);
    return outcome(flag, flag.rule, data, scratch);
  };
}

function outcome(flag: CompiledFlag, rule: CompiledRule, data: EvaluationData, scratch: Scratch): Evaluation {
  let result: unknown;
  try {
    result = rule(data);
  } catch (err) {
    if (err instanceof TargetingKeyMissingError) return failure(flag, "TARGETING_KEY_MISSING", err.message);
    if (err instanceof TargetingParseError) return failure(flag, "PARSE_ERROR", err.message);
    return failure(flag, "GENERAL", `targeting failed: ${describeThrown(err)}`);
  }

  if (result === null || result === undefined) return fallback(flag, "DEFAULT");
  const variant = variantKeyOf(result);
  if (variant === undefined || !Object.hasOwn(flag.variants, variant)) {
    return failure(flag, "GENERAL", `targeting returned ${describeResult(result)}, which is not a variant of flag "${flag.key}"`);
  }
  const split = scratch.fractionalCalled && result === scratch.lastFractional;
  return resolved(flag, split ? "SPLIT" : "TARGETING_MATCH", variant);
}
