import { TargetingKeyMissingError } from "./errors.js";
import { murmur3Utf8 } from "./murmur.js";
import { findEvaluationData, SCRATCH } from "./scratch.js";

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
  const hi = Math.floor(hash / 0x10000);
  const lo = hash % 0x10000;
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
 * non-empty string targetingKey: TargetingKeyMissingError (HTTP 400, design §4).
 */
export function fractionalValue(args: readonly unknown[], data: Record<string, unknown>): FractionalVariant {
  if (args.length === 0) return null;
  const first = args[0];
  const explicit = !Array.isArray(first);
  const entries = explicit ? args.slice(1) : args;
  let bucketBy: string;
  if (typeof first === "string") bucketBy = first;
  else if (explicit && first !== null && first !== undefined) return null; // flagd: a number or object is not a bucketing value
  else {
    const targetingKey = data["targetingKey"];
    if (typeof targetingKey !== "string" || targetingKey === "") {
      if (explicit) return null;
      throw new TargetingKeyMissingError("fractional needs a bucketing value or a non-empty string targetingKey in the context");
    }
    const flagd = data["$flagd"] as { flagKey?: unknown } | undefined;
    const flagKey = typeof flagd?.flagKey === "string" ? flagd.flagKey : "";
    bucketBy = flagKey + targetingKey;
  }
  const dist = parseDistribution(entries);
  return dist ? pickVariant(bucketingHash(bucketBy), dist) : null;
}

/**
 * The json-logic-engine method. Records its result in the evaluation's scratch record so
 * `evaluate` can tell SPLIT from TARGETING_MATCH.
 */
export function fractional(args: unknown, context: unknown, above: unknown): FractionalVariant {
  const root = findEvaluationData(context, above);
  const data = root ?? (context !== null && typeof context === "object" ? (context as Record<string, unknown>) : {});
  const result = fractionalValue(Array.isArray(args) ? args : [args], data);
  const scratch = root?.[SCRATCH];
  if (scratch) {
    scratch.fractionalCalled = true;
    scratch.lastFractional = result;
  }
  return result;
}
