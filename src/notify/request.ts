/**
 * One target, one message: the changes its `events:` filter lets through, formatted for its type,
 * as the exact bytes and headers to POST. Pure; the caller supplies the time and delivery id.
 */
import type { NotificationTarget } from "../model/types.js";
import { slackMessage } from "./slack.js";
import type { ChangeSummary } from "./summary.js";
import { SIGNATURE_HEADER, sign, webhookBody } from "./webhook.js";

export interface NotificationRequest {
  url: string;
  /** The serialized JSON; a signature covers exactly these bytes. */
  body: string;
  headers: Record<string, string>;
}

/** Same id on every retry of one message, so a receiver can drop duplicates. */
export const DELIVERY_HEADER = "X-Flagserve-Delivery";

/** The changes a target wants; absent `events` means all. */
export const selectChanges = (target: NotificationTarget, summaries: readonly ChangeSummary[]): ChangeSummary[] =>
  target.events ? summaries.filter((s) => target.events!.includes(s.event)) : [...summaries];

/** The request for `target`, or undefined when its filter leaves nothing to say. */
export function buildRequest(
  target: NotificationTarget,
  environment: string,
  summaries: readonly ChangeSummary[],
  timestamp: Date,
  deliveryId: string,
): NotificationRequest | undefined {
  const selected = selectChanges(target, summaries);
  if (selected.length === 0) return undefined;
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "flagserve" };
  if (target.type === "slack") {
    return { url: target.url, body: JSON.stringify(slackMessage(environment, selected, timestamp)), headers };
  }
  const body = JSON.stringify(webhookBody(environment, selected, timestamp));
  headers[DELIVERY_HEADER] = deliveryId;
  if (target.secret !== undefined) headers[SIGNATURE_HEADER] = sign(target.secret, body);
  return { url: target.url, body, headers };
}
