/** From an OFREP request body to the attributes targeting sees (see docs/evaluation.md). */
import { MAX_DEPTH, valueShapeProblem } from "../config/nesting.js";
import { isRecord } from "../model/json.js";
import { contextAttributes } from "../engine/index.js";
import { apiError } from "./problem.js";

/** What the request rules read of a request: its headers by (lower-case) name, web or Node alike. */
export type RequestHeaders = Pick<Headers, "get">;

/**
 * Body text as JSON: undefined when empty, 400 INVALID_CONTEXT (with `key`) when not JSON or
 * nested deeper than flag files may be (config/nesting.ts): the recorder, the admin API and the
 * answers walk or serialize it recursively, and a stack overflow would be a 500.
 */
export function parseJsonBody(text: string, key?: string): unknown {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw apiError(400, "INVALID_CONTEXT", `request body is not valid JSON: ${(error as Error).message}`, { key });
  }
  if (typeof value === "object" && value !== null && valueShapeProblem(value, text.length) !== undefined)
    throw apiError(400, "INVALID_CONTEXT", `request body nests deeper than ${MAX_DEPTH} levels of objects and arrays`, { key });
  return value;
}

/** Validates `{context}` and returns its attributes. A missing body or `{}` is an empty context. */
export function contextFromBody(body: unknown, key?: string): Record<string, unknown> {
  const invalid = (details: string) => apiError(400, "INVALID_CONTEXT", details, { key });
  if (body === undefined) return {};
  if (!isRecord(body)) throw invalid("request body must be a JSON object");
  const { context } = body;
  if (context === undefined) return {};
  if (!isRecord(context)) throw invalid("context must be a JSON object");
  if (context.properties !== undefined && !isRecord(context.properties)) throw invalid("context.properties must be a JSON object");
  if (context.targetingKey !== undefined && typeof context.targetingKey !== "string") {
    throw invalid("context.targetingKey must be a string");
  }
  return contextAttributes(context);
}
