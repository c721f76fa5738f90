/**
 * What both ways in state about a response: the h3 app (app.ts, ofrep.ts, events.ts) and the
 * node:http fast path (fast-path.ts). Each fact is written here once: the routes' names, the CORS
 * headers of a simple request when any origin is allowed, how an error becomes a status, a JSON
 * body and headers (logged when internal, counted by code), and the response counters of /metrics.
 */
import type { Logger } from "../log/logger.js";
import { toErrorResponse, type ErrorBody } from "./errors.js";
import type { Metrics } from "./metrics.js";

/** The OFREP evaluation routes, under the names /metrics counts their responses by (h3's route patterns). */
export const ALL_ROUTE = "/ofrep/v1/evaluate/flags";
export const FLAG_ROUTE = "/ofrep/v1/evaluate/flags/:key";
/** What precedes the flag key on the single-flag route, as clients write it. */
export const FLAG_PATH_PREFIX = `${ALL_ROUTE}/`;

/**
 * What CORS adds to a request that is not a preflight when any origin is allowed (what h3's
 * handleCors sets then): name and value pairs, in the order they are sent.
 */
export const ANY_ORIGIN_CORS_HEADERS: readonly (readonly [string, string])[] = [
  ["access-control-allow-origin", "*"],
  ["access-control-expose-headers", "etag"],
];

const RESPONSES = { name: "flagserve_http_responses_total", help: "Responses by route and status" } as const;
const ERRORS = { name: "flagserve_http_errors_total", help: "Error responses by code" } as const;

/** Counts one response under its route (an h3 route pattern, or "unmatched"). */
export function countResponse(metrics: Metrics, route: string, status: number): void {
  metrics.count(RESPONSES.name, RESPONSES.help, { route, status: String(status) });
}

/** `countResponse` for one route, with one counter per status resolved once: for counting on every request. */
export function responseCounter(metrics: Metrics, route: string): (status: number) => void {
  const counters = new Map<number, () => void>();
  return (status) => {
    let count = counters.get(status);
    if (!count) counters.set(status, (count = metrics.counter(RESPONSES.name, RESPONSES.help, { route, status: String(status) })));
    count();
  };
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  /** Headers the error asks for (`www-authenticate`, `allow`, `retry-after`), besides Content-Type. */
  headers: Record<string, string>;
}

/** Where the request failed, for the log line of an internal error. */
export interface Failure {
  metrics: Metrics;
  logger: Logger;
  method: string | undefined;
  path: string;
}

/**
 * Any error thrown while answering, as the response it becomes: an API error's own status, body
 * and headers, h3's routing errors mapped (errors.ts), anything else a 500 that is logged (the
 * cause, when h3 wrapped it). Every error response is counted by its code.
 */
export function errorResponse(error: unknown, { metrics, logger, method, path }: Failure): ErrorResponse {
  const { status, body } = toErrorResponse(error);
  if (status === 500) logger.error(`${method} ${path} failed: ${String((error as { cause?: unknown }).cause ?? error)}`);
  metrics.count(ERRORS.name, ERRORS.help, { code: body.errorCode });
  return { status, body, headers: headersOf(error) };
}

function headersOf(error: unknown): Record<string, string> {
  const headers = (error as { headers?: Headers | Readonly<Record<string, string>> } | null)?.headers;
  if (!headers) return {};
  return headers instanceof Headers ? Object.fromEntries(headers) : { ...headers };
}
