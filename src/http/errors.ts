/** Every error leaves as JSON `{errorCode, errorDetails}` (plus `key` on the single-flag route). */
import { HTTPError } from "h3";

export type ErrorCode =
  | "UNAUTHORIZED"
  | "INVALID_CONTEXT"
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

/** Maps any error that reached h3's error hook to a status and a JSON body. */
export function toErrorResponse(error: HTTPError): { status: number; body: ErrorBody } {
  if (isErrorBody(error.data)) return { status: error.status, body: error.data };
  if (error.status === 404) return { status: 404, body: { errorCode: "NOT_FOUND", errorDetails: "no such route" } };
  if (error.status === 405) return { status: 405, body: { errorCode: "METHOD_NOT_ALLOWED", errorDetails: error.message } };
  if (error.status === 413) return { status: 413, body: { errorCode: "PAYLOAD_TOO_LARGE", errorDetails: error.message } };
  if (error.status >= 400 && error.status < 500 && !error.unhandled) {
    return { status: error.status, body: { errorCode: "BAD_REQUEST", errorDetails: error.message } };
  }
  return { status: 500, body: { errorCode: "INTERNAL", errorDetails: "internal server error" } };
}
