import { outcomesOf, failure, type FlagOutcomes } from "./outcomes.js";
import { describeThrown, TargetingKeyMissingError, TargetingParseError } from "./errors.js";
import { bind, evaluationPass, type EvaluationData, type EvaluationPass, type EvaluationState } from "./evaluation-state.js";
import type { CompiledFlag, CompiledRule, Evaluation } from "./types.js";

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

/**
 * Evaluate one flag for one context (see docs/evaluation.md). Pure: the result depends only on the arguments.
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
 * context) is built on the first targeted flag and reused by the next ones, each with its own
 * `$flagd.flagKey` and a clean evaluation state (see bind).
 */
export function evaluatorFor(context: Record<string, unknown>, nowMs: number = Date.now()): (flag: CompiledFlag) => Evaluation {
  let pass: EvaluationPass | undefined;
  return (flag) => {
    const outcomes = outcomesOf(flag);
    if (flag.state === "DISABLED") return outcomes.disabled;
    const rule = flag.rule;
    if (rule === undefined) return outcomes.static;
    pass ??= evaluationPass(context, nowMs);
    return outcome(flag, outcomes, rule, pass.data, bind(pass, flag.key));
  };
}

function outcome(flag: CompiledFlag, outcomes: FlagOutcomes, rule: CompiledRule, data: EvaluationData, state: EvaluationState): Evaluation {
  let result: unknown;
  try {
    result = rule(data);
  } catch (err) {
    if (err instanceof TargetingKeyMissingError) return failure(flag, "TARGETING_KEY_MISSING", err.message);
    if (err instanceof TargetingParseError) return failure(flag, "PARSE_ERROR", err.message);
    return failure(flag, "GENERAL", `targeting failed: ${describeThrown(err)}`);
  }

  if (result === null || result === undefined) return outcomes.default;
  const variant = variantKeyOf(result);
  const split = state.fractionalCalled && result === state.lastFractional;
  const shared = variant === undefined ? undefined : (split ? outcomes.split : outcomes.match).get(variant);
  return shared ?? failure(flag, "GENERAL", `targeting returned ${describeResult(result)}, which is not a variant of flag "${flag.key}"`);
}
