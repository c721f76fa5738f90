/** Every error leaves as JSON `{errorCode, errorDetails}` (plus `key` on the single-flag route). */
import { HTTPError, type H3Event } from "h3";

/** The one Content-Type of every JSON response (JSON is UTF-8 by definition: no charset). */
export const JSON_CONTENT_TYPE = "application/json";

/** A JSON response body, with the Content-Type every JSON response carries. */
export function json(event: H3Event, value: unknown): string {
  event.res.headers.set("content-type", JSON_CONTENT_TYPE);
  return JSON.stringify(value);
}

export type ErrorCode =
  | "UNAUTHORIZED"
  | "INVALID_CONTEXT"
  | "INVALID_SESSION"
  | "PAYLOAD_TOO_LARGE"
  | "METHOD_NOT_ALLOWED"
  | "NOT_FOUND"
  | "FLAG_NOT_FOUND"
  | "RATE_LIMITED"
  | "INTERNAL";

export interface ErrorBody {
  key?: string;
  errorCode: string;
  errorDetails: string;
}

export function apiError(
  status: number,
  errorCode: ErrorCode,
  errorDetails: string,
  options: { key?: string; headers?: Record<string, string> } = {},
): HTTPError {
  const data: ErrorBody = options.key === undefined ? { errorCode, errorDetails } : { key: options.key, errorCode, errorDetails };
  return new HTTPError({ status, message: errorDetails, data, headers: options.headers });
}

const isErrorBody = (data: unknown): data is ErrorBody =>
  typeof data === "object" && data !== null && typeof (data as ErrorBody).errorCode === "string";

/** Maps any error that reached h3's error hook to a status and a JSON body from DESIGN §5's table. */
export function toErrorResponse(error: HTTPError): { status: number; body: ErrorBody } {
  if (isErrorBody(error.data)) return { status: error.status, body: error.data };
  if (error.status === 404) return { status: 404, body: { errorCode: "NOT_FOUND", errorDetails: "no such route" } };
  // h3's bare 400 is a path that is not valid percent-encoding: it names no route.
  if (error.status === 400 && !error.unhandled) {
    return { status: 404, body: { errorCode: "NOT_FOUND", errorDetails: "no such route: the path is not valid percent-encoding" } };
  }
  if (error.status === 405) return { status: 405, body: { errorCode: "METHOD_NOT_ALLOWED", errorDetails: error.message } };
  if (error.status === 413) return { status: 413, body: { errorCode: "PAYLOAD_TOO_LARGE", errorDetails: error.message } };
  return { status: 500, body: { errorCode: "INTERNAL", errorDetails: "internal server error" } };
}

/** Node answers request heads over its limit (16 KiB) itself, before h3: the same JSON, as raw HTTP. */
export const HEADERS_TOO_LARGE_RESPONSE = (() => {
  const body = JSON.stringify({ errorCode: "PAYLOAD_TOO_LARGE", errorDetails: "request headers are too large" });
  return `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
})();
