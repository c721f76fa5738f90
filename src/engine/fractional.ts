import { direct, isConstant, type BuildState, type Compiled } from "./codegen.js";
import { TargetingKeyMissingError } from "./errors.js";
import { murmur3Utf8, murmur3Utf8Concat } from "./murmur.js";
import { findEvaluationData, STATE, type EvaluationData } from "./evaluation-state.js";

/**
 * flagd's `fractional` operator, "v2" bucketing (flagd >= #1909, the testbed's @fractional-v2):
 *
 *   {"fractional": [ <bucketBy?>, [variant, weight?], [variant, weight?], ... ]}
 *
 * Arguments arrive already evaluated (json-logic-engine evaluates a plain method's arguments,
 * including nested arrays), so variants and weights may be any JsonLogic expression.
 */

const MAX_INT32 = 2_147_483_647;

export type FractionalVariant = string | number | boolean | null;

export interface Distribution {
  variants: FractionalVariant[];
  /** Cumulative upper bounds: variant i owns buckets [ends[i-1], ends[i]). */
  ends: number[];
  total: number;
}

/** MurmurHash3 x86_32, seed 0, over the UTF-8 bytes. */
export const bucketingHash = (value: string): number => murmur3Utf8(value, 0);

/**
 * `(hash * total) >>> 32` computed exactly. The product can reach 2^63, beyond a double's 2^53,
 * so the hash is split in 16-bit halves; every intermediate stays below 2^48. (Equivalent to the
 * BigInt form `Number((BigInt(hash) * BigInt(total)) >> 32n)`, without allocating BigInts.)
 */
export function bucketOf(hash: number, total: number): number {
  const hi = hash >>> 16;
  const lo = hash & 0xffff;
  return Math.floor((hi * total + Math.floor((lo * total) / 0x10000)) / 0x10000);
}

/**
 * Parse `[variant, weight?]` entries. null when flagd would return null: an entry that is not a
 * non-empty array, a variant that is not string/bool/number/null, a weight that is not an
 * integer, a sum over 2^31-1 or an all-zero distribution. Missing (or null) weight = 1; negative
 * weights count as 0.
 */
export function parseDistribution(entries: readonly unknown[]): Distribution | null {
  const variants: FractionalVariant[] = [];
  const ends: number[] = [];
  let total = 0;
  for (const entry of entries) {
    if (!Array.isArray(entry) || entry.length === 0) return null;
    const variant: unknown = entry[0] ?? null;
    if (variant !== null && !["string", "number", "boolean"].includes(typeof variant)) return null;
    let weight = 1;
    const w: unknown = entry[1];
    if (entry.length >= 2 && w !== null && w !== undefined) {
      if (typeof w !== "number" || !Number.isInteger(w)) return null;
      weight = Math.max(0, w);
    }
    total += weight;
    if (total > MAX_INT32) return null;
    variants.push(variant as FractionalVariant);
    ends.push(total);
  }
  return total === 0 ? null : { variants, ends, total };
}

/** The variant owning `hash`: first cumulative end strictly above the bucket. */
export function pickVariant(hash: number, dist: Distribution): FractionalVariant {
  const bucket = bucketOf(hash, dist.total);
  for (let i = 0; i < dist.ends.length; i++) {
    if (bucket < (dist.ends[i] as number)) return dist.variants[i] as FractionalVariant;
  }
  return null; // unreachable: bucket < total
}

/**
 * The operator's result for evaluated `args` against the root evaluation `data`.
 *
 * Bucketing value: the first argument when it evaluates to a string (hashed as is). A first
 * argument that is not a `[variant, weight]` entry is an explicit bucketing value; when it is not
 * a string but null (e.g. a missing `var`) it is dropped and `$flagd.flagKey + targetingKey` is used,
 * and without a usable targetingKey the result is null (DEFAULT), as flagd's operators return null
 * on error. Only the shorthand form, which has no bucketing value at all, fails without a
 * non-empty string targetingKey: TargetingKeyMissingError (HTTP 400; see docs/evaluation.md).
 */
export function fractionalValue(args: readonly unknown[], data: Record<string, unknown>): FractionalVariant {
  if (args.length === 0) return null;
  const first = args[0];
  const explicit = !Array.isArray(first);
  return variantFor(explicit, first, parseDistribution(explicit ? args.slice(1) : args), data);
}

/** fractionalValue once the form is known and the distribution parsed (null: flagd's null). */
function variantFor(explicit: boolean, first: unknown, dist: Distribution | null, data: Record<string, unknown>): FractionalVariant {
  if (typeof first === "string") return dist && pickVariant(bucketingHash(first), dist);
  if (explicit && first !== null && first !== undefined) return null; // flagd: a number or object is not a bucketing value
  const targetingKey = data["targetingKey"];
  if (typeof targetingKey !== "string" || targetingKey === "") {
    if (explicit) return null;
    throw new TargetingKeyMissingError("fractional needs a bucketing value or a non-empty string targetingKey in the context");
  }
  const flagd = data["$flagd"] as { flagKey?: unknown } | undefined;
  const flagKey = typeof flagd?.flagKey === "string" ? flagd.flagKey : "";
  return dist && pickVariant(murmur3Utf8Concat(flagKey, targetingKey), dist);
}

/** The root evaluation data, or failing that the operator's own context (outside an evaluation). */
function dataOf(root: EvaluationData | undefined, context: unknown): Record<string, unknown> {
  return root ?? (context !== null && typeof context === "object" ? (context as Record<string, unknown>) : {});
}

/** Records `result` in the evaluation's evaluation state, so `evaluate` can tell SPLIT from TARGETING_MATCH. */
function recorded(root: EvaluationData | undefined, result: FractionalVariant): FractionalVariant {
  const state = root?.[STATE];
  if (state) {
    state.fractionalCalled = true;
    state.lastFractional = result;
  }
  return result;
}

/** The json-logic-engine method, for the forms `compileFractional` leaves to it. */
export function fractional(args: unknown, context: unknown, above: unknown): FractionalVariant {
  const root = findEvaluationData(context, above);
  return recorded(root, fractionalValue(Array.isArray(args) ? args : [args], dataOf(root, context)));
}

/**
 * The usual forms, specialised when the rule is built: when every `[variant, weight]` entry is
 * written out as constants, the distribution is parsed once, and the compiled rule calls a
 * function of the bucketing value alone (no argument arrays built on every evaluation).
 */
export function compileFractional(args: unknown, build: BuildState): Compiled | false {
  if (!Array.isArray(args) || args.length === 0) return false;
  const [first, ...rest] = args as unknown[];
  if (Array.isArray(first)) {
    if (!args.every(isConstant)) return false;
    const dist = parseDistribution(args);
    const byTargetingKey = (context: unknown, above: unknown): FractionalVariant => {
      const root = findEvaluationData(context, above);
      return recorded(root, variantFor(false, undefined, dist, dataOf(root, context)));
    };
    return build.compile`${direct(byTargetingKey)}(context, above)`;
  }
  if (!rest.every(isConstant)) return false;
  const dist = parseDistribution(rest);
  const parts = catParts(first);
  if (parts !== undefined) {
    const byParts = (values: unknown[], context: unknown, above: unknown): FractionalVariant =>
      recorded(findEvaluationData(context, above), dist && pickVariant(hashOfParts(values), dist));
    return build.compile`${direct(byParts)}(${parts}, context, above)`;
  }
  const byValue = (value: unknown, context: unknown, above: unknown): FractionalVariant => {
    const root = findEvaluationData(context, above);
    const data = dataOf(root, context);
    // An expression that evaluates to an array is an entry, not a bucketing value.
    return recorded(root, Array.isArray(value) ? fractionalValue([value, ...rest], data) : variantFor(true, value, dist, data));
  };
  return build.compile`${direct(byValue)}(${first}, context, above)`;
}

/**
 * The parts of a `{"cat": [...]}` bucketing value (flagd's documented form is a `cat` of
 * `$flagd.flagKey` and an attribute). Its value is always a string, `'' + part + part...` as
 * json-logic-engine compiles it, so the parts can be hashed in place: joining them builds a
 * string that is copied again on its first read.
 */
function catParts(value: unknown): unknown[] | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const parts = (value as Record<string, unknown>)["cat"];
  return keys.length === 1 && Array.isArray(parts) ? parts : undefined;
}

/** `'' + value`: what the compiled `cat` makes of a part (a template literal converts objects differently). */
const catText = (value: unknown): string => "" + (value as string);

/** The bucketing hash of `'' + values[0] + values[1] + ...`. */
function hashOfParts(values: unknown[]): number {
  if (values.length === 2) return murmur3Utf8Concat(catText(values[0]), catText(values[1]));
  return bucketingHash(values.map(catText).join(""));
}
