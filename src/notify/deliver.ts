/**
 * One POST, made to survive a flaky receiver without ever hanging: each attempt has a timeout,
 * transient failures (network errors, timeouts, 429, 5xx) are retried a bounded number of times
 * with exponential backoff (or the receiver's Retry-After, capped), and other answers are final.
 * Every failure is logged with the URL cut to its origin: a Slack webhook's path is its secret.
 * Never throws.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../log/logger.js";
import { networkReason } from "../sources/network-reason.js";
import type { NotificationRequest } from "./request.js";

export interface DeliveryOptions {
  logger: Logger;
  /** Start of every log line, e.g. "production: slack notification to https://hooks.slack.com". */
  label: string;
  fetch?: typeof globalThis.fetch;
  /** Per attempt, answer body included (default 5000). */
  timeoutMs?: number;
  /** Attempts in all, the first included (default 3). */
  attempts?: number;
  /** Wait before the first retry, doubled for each next one (default 500: 0.5 s, 1 s, 2 s, …). */
  backoffMs?: number;
  /** Longest Retry-After honoured (default 30000). */
  maxRetryAfterMs?: number;
  /** Aborts the attempt in flight and any wait: the server is shutting down. */
  signal?: AbortSignal;
}

export interface DeliveryResult {
  ok: boolean;
  attempts: number;
  /** The last HTTP status, when there was an answer. */
  status?: number;
}

type Attempt = { ok: true; status: number } | { ok: false; retry: boolean; reason: string; status?: number; retryAfterMs?: number };

/** Only scheme, host and port: the path and query of a webhook URL are credentials. */
export function redactUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** Retry-After as delay-seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A short, one-line excerpt of an error answer (Slack says e.g. `invalid_payload`). */
const excerpt = (text: string): string => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
};

async function attempt(request: NotificationRequest, options: DeliveryOptions, timeoutMs: number): Promise<Attempt> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const response = await (options.fetch ?? globalThis.fetch)(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal,
      // A redirected POST would be replayed as a GET elsewhere: report it instead.
      redirect: "manual",
    });
    // Read the answer in full (under the same timeout) so the connection is released.
    const text = await response.text();
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    const retry = response.status === 429 || response.status >= 500;
    return {
      ok: false,
      retry,
      status: response.status,
      reason: `HTTP ${response.status}${text ? ` ${excerpt(text)}` : ""}`,
      retryAfterMs: retry ? parseRetryAfter(response.headers.get("retry-after")) : undefined,
    };
  } catch (error) {
    if (options.signal?.aborted) return { ok: false, retry: false, reason: "cancelled at shutdown" };
    if (timeout.aborted) return { ok: false, retry: true, reason: `no answer within ${timeoutMs} ms` };
    return { ok: false, retry: true, reason: networkReason(error) };
  }
}

export async function deliver(request: NotificationRequest, options: DeliveryOptions): Promise<DeliveryResult> {
  const { logger, label, signal } = options;
  const timeoutMs = options.timeoutMs ?? 5000;
  const attempts = Math.max(1, options.attempts ?? 3);
  const backoffMs = options.backoffMs ?? 500;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  for (let n = 1; ; n++) {
    const result = await attempt(request, options, timeoutMs);
    if (result.ok) {
      logger.info(`${label} sent${n > 1 ? ` (attempt ${n})` : ""}`);
      return { ok: true, attempts: n, status: result.status };
    }
    if (!result.retry || n >= attempts) {
      logger.error(`${label} failed: ${result.reason}${result.retry ? ` (gave up after ${n} attempts)` : ""}`);
      return { ok: false, attempts: n, status: result.status };
    }
    const delay = Math.min(result.retryAfterMs ?? backoffMs * 2 ** (n - 1), maxRetryAfterMs);
    logger.warn(`${label} failed: ${result.reason} (attempt ${n} of ${attempts}, retrying in ${delay} ms)`);
    try {
      await sleep(delay, undefined, { signal });
    } catch {
      logger.error(`${label} dropped: shutting down before retry ${n + 1}`);
      return { ok: false, attempts: n, status: result.status };
    }
  }
}
