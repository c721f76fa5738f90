/**
 * Per-evaluation state that operators need but JsonLogic has no place for.
 *
 * `evaluate` builds a fresh data object for every call and hangs a scratch record on it under a
 * symbol key (`var`, `missing` and friends only see string keys, and a client can never forge
 * it: JSON has no symbols). Operators find it through their `context` argument. Nothing is
 * module-global, so concurrent or re-entrant evaluations cannot observe each other.
 */
export const SCRATCH: unique symbol = Symbol("flagserve.evaluation");

export interface Scratch {
  /** Whether any `fractional` call ran during this evaluation. */
  fractionalCalled: boolean;
  /** The value the most recent `fractional` call returned (SPLIT detection, see evaluate.ts). */
  lastFractional: unknown;
  /** Segment results on the evaluation data, by segment name (see compile.ts). */
  segments?: Map<string, unknown>;
}

export type EvaluationData = Record<string, unknown> & { [SCRATCH]?: Scratch };

export const newScratch = (): Scratch => ({ fractionalCalled: false, lastFractional: undefined });

export const hasScratch = (x: unknown): x is EvaluationData & { [SCRATCH]: Scratch } =>
  x !== null && typeof x === "object" && SCRATCH in x;

/**
 * The root evaluation data as seen from an operator. Inside iterators (`map`, `filter`, `some`,
 * ...) json-logic-engine passes the current item as `context` and stacks the outer scopes in
 * `above` as nested arrays, so the root is searched for there (depth-bounded).
 */
export function findEvaluationData(context: unknown, above: unknown, depth = 0): EvaluationData | undefined {
  if (hasScratch(context)) return context;
  if (!Array.isArray(above) || depth > 16) return undefined;
  for (const scope of above) {
    if (hasScratch(scope)) return scope;
    if (Array.isArray(scope)) {
      const found = findEvaluationData(undefined, scope, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * The data targeting runs against: the context's attributes plus flagd's `$flagd` properties
 * (overwriting any client-supplied `$flagd`, as flagd does), with the scratch record attached.
 */
export function evaluationData(
  context: Record<string, unknown>,
  flagKey: string,
  nowMs: number,
  scratch: Scratch,
): EvaluationData {
  // Built by assignment: measured on Node 20 this is ~20x cheaper than an object spread with
  // extra keys, or than defineProperty; it runs once per targeted flag per request. A symbol
  // key is invisible to `var` and to JSON.
  const data: EvaluationData = Object.assign({}, context);
  // Object.assign *sets* `__proto__`, which would make a client's `{"__proto__": {...}}` the
  // prototype; the attribute must stay an own key like any other (context is plain data).
  if (Object.hasOwn(context, "__proto__")) {
    Object.setPrototypeOf(data, Object.prototype);
    Object.defineProperty(data, "__proto__", { value: context["__proto__"], enumerable: true, writable: true, configurable: true });
  }
  data["$flagd"] = { flagKey, timestamp: Math.floor(nowMs / 1000) };
  data[SCRATCH] = scratch;
  return data;
}

/** Evaluation data built by evaluationData, made ready for another flag of the same evaluation pass. */
export function rebind(data: EvaluationData, flagKey: string, scratch: Scratch): EvaluationData {
  const flagd = data["$flagd"] as { timestamp: number };
  data["$flagd"] = { flagKey, timestamp: flagd.timestamp };
  data[SCRATCH] = scratch;
  return data;
}
