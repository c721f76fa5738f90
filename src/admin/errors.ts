/**
 * Admin errors: a status and a JSON body `{errorCode, errorDetails, ...}`. Thrown by the
 * override service (so the programmatic API gets the same message) and sent as-is over HTTP
 * (handler.ts); plain data, so that commands using the override layer load no HTTP code.
 */

export type AdminErrorCode =
  | "UNAUTHORIZED"
  | "TOO_MANY_REQUESTS"
  | "FORBIDDEN"
  | "MISDIRECTED_REQUEST"
  | "INVALID_REQUEST"
  | "INVALID_SESSION"
  | "SESSION_EVICTED"
  | "ENVIRONMENT_NOT_FOUND"
  | "FLAG_NOT_FOUND"
  | "VARIANT_NOT_FOUND"
  | "INVALID_CONFIG"
  | "CONFLICT"
  | "NOT_SAVED"
  | "METHOD_NOT_ALLOWED";

export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: AdminErrorCode,
    readonly errorDetails: string,
    /** Extra fields of the JSON body (e.g. `validVariants`, `problems`). */
    readonly extra: Record<string, unknown> = {},
    /** Response headers (`Allow`, `WWW-Authenticate`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(errorDetails);
  }
}
