/** Every error leaves as JSON `{errorCode, errorDetails}` (plus `key` on the single-flag route). */
import { HTTPError, type H3Event } from "h3";
import { ApiError, apiError, type ErrorBody } from "../evaluation/problem.js";
import { JSON_CONTENT_TYPE } from "../evaluation/ofrep-bodies.js";

/** A JSON response body, with the Content-Type every JSON response carries. */
export function json(event: H3Event, value: unknown): string {
  event.res.headers.set("content-type", JSON_CONTENT_TYPE);
  return JSON.stringify(value);
}

export { ApiError, type ErrorBody, type ErrorCode } from "../evaluation/problem.js";

/**
 * A plain error answer (evaluation/problem.ts) as h3's own error type: h3 logs any other error
 * it is thrown as unhandled, before our error hook answers it.
 */
export const toHttpError = (error: unknown): unknown =>
  error instanceof ApiError
    ? new HTTPError({ status: error.status, message: error.message, data: error.data, headers: error.headers })
    : error;

/** `apiError` (evaluation/problem.ts) as h3's error type, for h3 handlers to throw. */
export const httpError = (...args: Parameters<typeof apiError>): HTTPError => toHttpError(apiError(...args)) as HTTPError;

/** Runs `fn` for an h3 handler, rethrowing plain error answers as h3's. */
export async function withHttpErrors<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toHttpError(error);
  }
}

const isErrorBody = (data: unknown): data is ErrorBody =>
  typeof data === "object" && data !== null && typeof (data as ErrorBody).errorCode === "string";

/**
 * Maps any error thrown while answering to a status and a JSON body from the table in
 * docs/api.md: an API error (plain or as h3's) keeps its own, h3's routing errors are mapped, and
 * anything else is a 500 (front-door.ts logs those).
 */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (!(error instanceof HTTPError || error instanceof ApiError)) return { status: 500, body: INTERNAL };
  if (isErrorBody(error.data)) return { status: error.status, body: error.data };
  if (error.status === 404) return { status: 404, body: { errorCode: "NOT_FOUND", errorDetails: "no such route" } };
  // h3's bare 400 is a path that is not valid percent-encoding: it names no route.
  if (error.status === 400 && !(error as HTTPError).unhandled) {
    return { status: 404, body: { errorCode: "NOT_FOUND", errorDetails: "no such route: the path is not valid percent-encoding" } };
  }
  if (error.status === 405) return { status: 405, body: { errorCode: "METHOD_NOT_ALLOWED", errorDetails: error.message } };
  if (error.status === 413) return { status: 413, body: { errorCode: "PAYLOAD_TOO_LARGE", errorDetails: error.message } };
  return { status: 500, body: INTERNAL };
}

const INTERNAL: ErrorBody = { errorCode: "INTERNAL", errorDetails: "internal server error" };

/** Node answers request heads over its limit (16 KiB) itself, before h3: the same JSON, as raw HTTP. */
export const HEADERS_TOO_LARGE_RESPONSE = (() => {
  const body = JSON.stringify({ errorCode: "PAYLOAD_TOO_LARGE", errorDetails: "request headers are too large" });
  return `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
})();
