/**
 * Errors that cross the boundary between operators (deep inside json-logic-engine) and
 * `evaluate`, which maps them to OpenFeature error codes. Subclasses earn their place here:
 * `instanceof` is the only reliable way to recognise them after the engine rethrows.
 */

/**
 * An outcome of an evaluation rather than a fault of the program: thrown once per flag evaluated
 * (an anonymous context meets every `fractional`), and read for its class and message only. So no
 * stack trace is taken: capturing one cost more than the rest of the evaluation (two thirds of an
 * evaluate-all pass over 100 flags, 30 of them `fractional`, for contexts without a targeting key).
 */
class EvaluationSignal extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/** `fractional` had neither a bucketing value nor a usable `targetingKey`. */
export class TargetingKeyMissingError extends EvaluationSignal {
  override name = "TargetingKeyMissingError";
}

/**
 * The flag has a problem in its files and no good version to serve instead (see unusableFlag):
 * with --allow-invalid at start-up, or a flag added or broken by a reload before it ever loaded.
 */
export class TargetingParseError extends EvaluationSignal {
  override name = "TargetingParseError";
}

/**
 * json-logic-engine throws non-Error values (`NaN`, `{ type: "Unknown Operator", key }`,
 * `{ type: "Invalid Arguments" }`); turn whatever was thrown into one readable line.
 */
export function describeThrown(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "number" && Number.isNaN(err)) return "an arithmetic operation did not produce a number";
  if (err !== null && typeof err === "object") {
    const { type, key } = err as { type?: unknown; key?: unknown };
    if (type === "Unknown Operator" && typeof key === "string") return `unknown operator "${key}"`;
    if (type !== undefined) return typeof key === "string" ? `${String(type)}: ${key}` : String(type);
    try {
      return JSON.stringify(err);
    } catch {
      return "unknown error";
    }
  }
  return String(err);
}
