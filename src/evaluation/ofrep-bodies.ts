/**
 * The OFREP body shapes (docs/evaluation.md, docs/api.md), shared by the HTTP routes and `flagserve eval` so both
 * answer with the same bytes for the same flag and context.
 */
import type { Metadata } from "../model/types.js";
import { evaluate } from "../engine/index.js";
import { isEvaluationError, type CompiledFlag, type Evaluation } from "../engine/types.js";
import { contextFromBody } from "./context.js";
import { ApiError, apiError, type ErrorBody } from "./problem.js";

/** The one Content-Type of every JSON response (JSON is UTF-8 by definition: no charset). */
export const JSON_CONTENT_TYPE = "application/json";

type Success = Exclude<Evaluation, { errorCode: string }>;
type Failure = Extract<Evaluation, { errorCode: string }>;

/** A success item with its fields in OFREP's order; `value` and `variant` only when known. */
export function successItem(e: Success) {
  return {
    key: e.key,
    ...(e.value !== undefined && { value: e.value }),
    reason: e.reason,
    ...(e.variant !== undefined && { variant: e.variant }),
    metadata: e.metadata,
  };
}

/** Single-flag evaluation error (400): the error fields plus the flag's metadata. */
export function errorItem(e: Failure): { key: string; errorCode: string; errorDetails: string; metadata: Metadata } {
  return { key: e.key, errorCode: e.errorCode, errorDetails: e.errorDetails, metadata: e.metadata };
}

/** Evaluate-all item: the error fields, mirrored in `result` as the seed document shows. */
export function bulkItem(e: Evaluation) {
  if (!isEvaluationError(e)) return successItem(e);
  const { key, errorCode, errorDetails } = e;
  return { key, errorCode, errorDetails, result: { key, errorCode, errorDetails }, metadata: e.metadata };
}

/** An evaluate-all item as JSON text (answers/bulk.ts keeps it, as bytes, per shared outcome). */
export const bulkItemJson = (e: Evaluation): string => JSON.stringify(bulkItem(e));

export type SingleBody = ReturnType<typeof successItem> | ReturnType<typeof errorItem>;

/**
 * `POST /ofrep/v1/evaluate/flags/{key}` once the environment is known, the one rule the server
 * (answers/single.ts) and `flagserve eval` both answer by: the flag (undefined when the
 * environment has none by that key) and the request body (parsed JSON, undefined when empty) ->
 * the status, the body and the evaluation. Throws, as ApiErrors with `key`, the request's 400
 * INVALID_CONTEXT first, then the 404 FLAG_NOT_FOUND. `enrich` changes the context before
 * evaluation (fixture/enrich.ts).
 */
export function flagResponse(
  flag: CompiledFlag | undefined,
  key: string,
  body: unknown,
  nowMs: number,
  enrich?: (attributes: Record<string, unknown>) => Record<string, unknown>,
): { status: 200 | 400; body: SingleBody; result: Evaluation } {
  const attributes = contextFromBody(body, key);
  if (!flag) throw apiError(404, "FLAG_NOT_FOUND", `flag '${key}' was not found`, { key });
  const result = evaluate(flag, enrich ? enrich(attributes) : attributes, nowMs);
  return isEvaluationError(result) ? { status: 400, body: errorItem(result), result } : { status: 200, body: successItem(result), result };
}

/** `flagResponse` with its error answers as plain data too, for `flagserve eval`. */
export function evaluateFlag(
  flags: ReadonlyMap<string, CompiledFlag>,
  key: string,
  body: unknown,
  nowMs: number = Date.now(),
): { status: number; body: SingleBody | ErrorBody } {
  try {
    const { status, body: answer } = flagResponse(flags.get(key), key, body, nowMs);
    return { status, body: answer };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, body: error.data };
  }
}
