/**
 * The generic webhook: a JSON body a program can act on, and an HMAC so the receiver can tell
 * it came from this flagserve. Pure; the notifier serializes the body once and signs exactly
 * those bytes.
 *
 * Header format (when the target has a `secret`):
 *
 *     X-Flagserve-Signature: sha256=<64 lowercase hex digits>
 *
 * the HMAC-SHA256 of the raw request body (UTF-8 bytes, as received) keyed with the secret, the
 * same scheme as GitHub's `X-Hub-Signature-256`. Verify it over the raw bytes before parsing,
 * with a constant-time comparison; the body's `timestamp` lets a receiver refuse old replays.
 */
import { createHmac } from "node:crypto";
import type { ChangeSummary } from "./summary.js";

export const SIGNATURE_HEADER = "X-Flagserve-Signature";

export interface WebhookChange {
  type: ChangeSummary["kind"];
  /** Flag or segment key; null for an API key rotation (the key is never sent). */
  key: string | null;
  change: ChangeSummary["change"];
  details: string[];
}

export interface WebhookBody {
  environment: string;
  /** ISO 8601, when the message was composed. */
  timestamp: string;
  changes: WebhookChange[];
}

export function webhookBody(environment: string, summaries: readonly ChangeSummary[], timestamp: Date): WebhookBody {
  return {
    environment,
    timestamp: timestamp.toISOString(),
    changes: summaries.map((s) => ({ type: s.kind, key: s.key, change: s.change, details: [...s.details] })),
  };
}

/** `sha256=<hex>` of HMAC-SHA256(secret, rawBody): the `X-Flagserve-Signature` value. */
export function sign(secret: string, rawBody: string | Uint8Array): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
}
