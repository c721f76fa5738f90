/**
 * SSE wire formats (see docs/api.md). Each event is encoded once per environment and the same bytes
 * are written to every client of that environment.
 */
import type { Change } from "../model/change.js";

export type EventSet = "primary" | "variant";

export interface SseEvent {
  name?: string;
  data: string;
  id?: number;
}

/** `event:`, `data:`, `id:` in that order (the seed's order), then a blank line. */
export function encodeEvent({ name, data, id }: SseEvent): string {
  return `${name === undefined ? "" : `event: ${name}\n`}data: ${data}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

/** The same in both event sets. */
export const HEARTBEAT = encodeEvent({ name: "heartbeat", data: "{}" });

/** The default heartbeat interval of each event set, in seconds. */
export const DEFAULT_HEARTBEAT_SECONDS: Record<EventSet, number> = { primary: 15, variant: 30 };

/**
 * The events one reload produces for the primary stream, per the table in docs/api.md: one
 * `flag-updated` per flag, one `segment-modified` however many segments changed, and
 * `config-updated` `api-key-rotated` when the key changed, followed by the Flipswitch SDKs'
 * own `api-key-rotated` event saying until when the old key works (`keyValidUntil`, ISO-8601;
 * spec clients ignore event names they do not know). The variant set folds segments into
 * `flag-change` null.
 */
export function eventsFor(
  changes: readonly Change[],
  set: EventSet,
  timestamp: string,
  keyValidUntil: string = timestamp,
): { name: string; data: string }[] {
  const events: { name: string; data: string }[] = [];
  const flagEvent = set === "primary" ? "flag-updated" : "flag-change";
  for (const change of changes) {
    if (change.kind === "flag") events.push({ name: flagEvent, data: JSON.stringify({ flagKey: change.key, timestamp }) });
  }
  if (changes.some((c) => c.kind === "segment")) {
    events.push(
      set === "primary"
        ? { name: "config-updated", data: JSON.stringify({ reason: "segment-modified", timestamp }) }
        : { name: "flag-change", data: JSON.stringify({ flagKey: null, timestamp }) },
    );
  }
  if (set === "primary" && changes.some((c) => c.kind === "api-key")) {
    events.push({ name: "config-updated", data: JSON.stringify({ reason: "api-key-rotated", timestamp }) });
    events.push({ name: "api-key-rotated", data: JSON.stringify({ validUntil: keyValidUntil, timestamp }) });
  }
  return events;
}

/** The OFREP stream's message (ADR-0008): unnamed, so EventSource delivers it as `message`. */
export const refetchEvent = (configEtag: string, lastModified: number): string =>
  JSON.stringify({ type: "refetchEvaluation", etag: configEtag, lastModified });
