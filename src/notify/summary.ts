/**
 * A change, in words a person reads in a chat channel: which flag or segment, created, updated
 * or deleted, and a few short "before -> after" lines. Pure, so every message format (Slack,
 * webhook) says the same thing and the wording is tested without any I/O.
 */
import type { Change } from "../model/change.js";
import type { FlagDefinition, JsonValue } from "../model/types.js";
import { canonicalJson } from "../model/json.js";

/** The `events:` filter names, exactly as the schema lists them. */
export const NOTIFICATION_EVENTS = [
  "flag-created",
  "flag-updated",
  "flag-deleted",
  "segment-created",
  "segment-updated",
  "segment-deleted",
  "api-key-rotated",
] as const;

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export interface ChangeSummary {
  /** The `events:` filter name this change counts as. */
  event: NotificationEvent;
  kind: Change["kind"];
  /** The flag or segment key; null for a key rotation (the key itself is never told). */
  key: string | null;
  /** An API key is "rotated", everything else created, updated or deleted. */
  change: "created" | "updated" | "deleted" | "rotated";
  /** "flag new-checkout", "segment beta-testers", "API key". */
  subject: string;
  /** What changed beyond the kind of change, e.g. "defaultVariant: off -> on". May be empty. */
  details: string[];
}

/** Values longer than this are cut: a message line, not a dump of the configuration. */
const MAX_VALUE = 40;

/** A variant value as it would be written in JSON, shortened. */
export function formatValue(value: JsonValue | undefined): string {
  const text = value === undefined ? "undefined" : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** `{}` and absent both mean "no targeting". */
const hasTargeting = (flag: FlagDefinition): boolean => flag.targeting !== undefined && Object.keys(flag.targeting).length > 0;

const variantName = (name: string | null): string => (name === null ? "null" : name);

/** Lines describing a new flag: what it serves. */
function describeCreatedFlag(flag: FlagDefinition): string[] {
  const lines = [`variants: ${Object.keys(flag.variants).join(", ")}`, `defaultVariant: ${variantName(flag.defaultVariant)}`];
  if (flag.state !== "ENABLED") lines.push(`state: ${flag.state}`);
  if (hasTargeting(flag)) lines.push("targeting added");
  return lines;
}

/** Before/after lines for an edited flag, in a fixed order. */
export function describeFlagUpdate(before: FlagDefinition, after: FlagDefinition): string[] {
  const lines: string[] = [];
  if (before.state !== after.state) lines.push(`state: ${before.state} -> ${after.state}`);
  if (before.defaultVariant !== after.defaultVariant) {
    lines.push(`defaultVariant: ${variantName(before.defaultVariant)} -> ${variantName(after.defaultVariant)}`);
  }
  const names = [...new Set([...Object.keys(before.variants), ...Object.keys(after.variants)])];
  for (const name of names) {
    const was = Object.hasOwn(before.variants, name) ? before.variants[name] : undefined;
    const now = Object.hasOwn(after.variants, name) ? after.variants[name] : undefined;
    if (was === undefined) lines.push(`variant ${name} added: ${formatValue(now)}`);
    else if (now === undefined) lines.push(`variant ${name} removed`);
    else if (!same(was, now)) lines.push(`variant ${name}: ${formatValue(was)} -> ${formatValue(now)}`);
  }
  const had = hasTargeting(before);
  const has = hasTargeting(after);
  if (!had && has) lines.push("targeting added");
  else if (had && !has) lines.push("targeting removed");
  else if (had && has && !same(before.targeting, after.targeting)) lines.push("targeting changed");
  if (!same(before.metadata, after.metadata)) lines.push("metadata changed");
  // The diff also counts flag-set metadata (merged into every flag's answers) as a change.
  if (lines.length === 0) lines.push("metadata changed");
  return lines;
}

/** One change as a subject, a change kind and short detail lines. Never includes an API key. */
export function describeChange(change: Change): ChangeSummary {
  if (change.kind === "api-key") {
    return { event: "api-key-rotated", kind: "api-key", key: null, change: "rotated", subject: "API key", details: [] };
  }
  const base = { kind: change.kind, key: change.key, change: change.change, subject: `${change.kind} ${change.key}` } as const;
  const event = `${change.kind}-${change.change}` as NotificationEvent;
  if (change.kind === "segment") {
    return { ...base, event, details: change.change === "updated" ? ["rule changed"] : [] };
  }
  let details: string[] = [];
  if (change.change === "created" && change.after) details = describeCreatedFlag(change.after);
  else if (change.change === "updated" && change.before && change.after) details = describeFlagUpdate(change.before, change.after);
  return { ...base, event, details };
}
