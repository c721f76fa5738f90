/**
 * The API's error answers as plain data: a status, the JSON body `{errorCode, errorDetails}`
 * (plus `key` on the single-flag route) and any headers the answer needs. Thrown by evaluation
 * and request checks; only http/ turns one into a response, the CLI prints its body.
 */

export type ErrorCode =
  | "UNAUTHORIZED"
  | "INVALID_CONTEXT"
  | "INVALID_SESSION"
  | "PAYLOAD_TOO_LARGE"
  | "METHOD_NOT_ALLOWED"
  | "NOT_FOUND"
  | "FLAG_NOT_FOUND"
  | "RATE_LIMITED"
  | "INVALID_FLAGS"
  | "INTERNAL";

export interface ErrorBody {
  key?: string;
  errorCode: string;
  errorDetails: string;
}

/**
 * `status`, `headers` and `data` are the fields h3 reads from a thrown error, so an ApiError
 * thrown in an h3 handler keeps its status and headers there too.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly data: ErrorBody,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(data.errorDetails);
  }
}

export function apiError(
  status: number,
  errorCode: ErrorCode,
  errorDetails: string,
  options: { key?: string; headers?: Record<string, string> } = {},
): ApiError {
  const data: ErrorBody = options.key === undefined ? { errorCode, errorDetails } : { key: options.key, errorCode, errorDetails };
  return new ApiError(status, data, options.headers);
}
