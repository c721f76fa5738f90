/**
 * What a change to the flag files does, per environment, told from the diff behind the server's
 * change events (changes/diff.ts) and the events it would send for it (events/encode.ts): the
 * report and a running server cannot disagree. Keys are compared, never shown.
 */
import type { ConfigLoad, LoadedEnvironment } from "../config/index.js";
import { answeredFlag, diffEnvironments, type Version } from "../changes/diff.js";
import type { Change } from "../model/change.js";
import { segmentRefs } from "../admin/describe.js";
import { eventsFor } from "../events/encode.js";
import { canonicalJson, compare } from "../model/json.js";
import type { FlagDefinition, JsonObject, JsonValue, Metadata, Problem } from "../model/types.js";

/** The parts of a flag a change can touch, in the order they are reported. */
export const FLAG_FIELDS = ["state", "defaultVariant", "variants", "targeting", "metadata"] as const;
export type FlagField = (typeof FLAG_FIELDS)[number];

export interface FlagChange {
  flag: string;
  /** What changed (`metadata` includes the flag-set metadata merged into its answers). */
  fields: FlagField[];
  state?: { before: string; after: string };
  defaultVariant?: { before: string | null; after: string | null };
  /** Variant names added, removed, or whose value changed; with every variant before and after. */
  variants?: { added: string[]; removed: string[]; changed: string[]; before: Record<string, JsonValue>; after: Record<string, JsonValue> };
  /** The rule as written, before and after (absent: no targeting). */
  targeting?: { before?: JsonObject; after?: JsonObject };
  /** Metadata keys added, removed, or whose value changed (flag-set metadata included); with the metadata before and after. */
  metadata?: { added: string[]; removed: string[]; changed: string[]; before: Metadata; after: Metadata };
}

export interface SegmentChange {
  segment: string;
  change: "created" | "updated" | "deleted";
  /** The flags whose answers it can change (they use it, directly or through other segments). */
  flags: string[];
  /** Its rule before and after (absent on the side where it does not exist). */
  before?: JsonValue;
  after?: JsonValue;
}

/** An event a running server would send on the environment's stream (primary event set), without its timestamp. */
export interface ServerEvent {
  event: string;
  data: Record<string, JsonValue>;
}

export interface EnvironmentDiff {
  environment: string;
  /** `invalid`: NEW cannot be loaded; a running server keeps the last good configuration (no events). */
  status: "added" | "removed" | "changed" | "unchanged" | "invalid";
  added: string[];
  removed: string[];
  changed: FlagChange[];
  /** Flags NEW defines with a problem: a running server keeps their last good definition (no event). */
  invalid: string[];
  segments: SegmentChange[];
  /** The API key written in the files: never the key itself. */
  apiKey?: "added" | "removed" | "changed";
  notifications?: { before: number; after: number };
  events: ServerEvent[];
  /** NEW's problems in this environment. */
  problems: Problem[];
}

export interface ConfigurationDiff {
  /** Whether anything differs (what `--exit-code` tells). */
  changed: boolean;
  environments: EnvironmentDiff[];
  /** NEW's problems not tied to one environment. */
  problems: Problem[];
}

/** The diff's view of a loaded environment: the key as written (a generated one is not in the files). */
const versionOf = (loaded: LoadedEnvironment): Version => ({ config: loaded.config, apiKey: loaded.config.apiKey ?? "" });

/** Compares two loads (`OLD` and `NEW`), environment by environment. */
export function compareLoads(before: ConfigLoad, after: ConfigLoad): ConfigurationDiff {
  const names = [...new Set([...before.environments.keys(), ...after.environments.keys(), ...after.problems.keys()])]
    .filter((n) => n !== "")
    .sort(compare);
  const environments = names.map((name) =>
    diffEnvironment(name, before.environments.get(name), after.environments.get(name), after.problems.get(name) ?? []),
  );
  const problems = after.problems.get("") ?? [];
  return { changed: environments.some((e) => e.status !== "unchanged"), environments, problems };
}

function diffEnvironment(
  name: string,
  before: LoadedEnvironment | undefined,
  after: LoadedEnvironment | undefined,
  problems: Problem[],
): EnvironmentDiff {
  const diff: EnvironmentDiff = {
    environment: name,
    status: "unchanged",
    added: [],
    removed: [],
    changed: [],
    invalid: [],
    segments: [],
    events: [],
    problems,
  };
  if (!after && problems.length > 0) return { ...diff, status: "invalid" };
  // As the server does (store/snapshot.ts keepLastGoodFlags): a flag broken by the change keeps its last good definition.
  diff.invalid = Object.keys(after?.config.invalidFlags ?? {}).sort(compare);
  const invalid = new Set(diff.invalid);
  const changes = diffEnvironments(before && versionOf(before), after && versionOf(after)).filter(
    (c) => c.kind !== "flag" || !invalid.has(c.key),
  );
  for (const change of changes) {
    if (change.kind === "flag" && change.change === "created") diff.added.push(change.key);
    else if (change.kind === "flag" && change.change === "deleted") diff.removed.push(change.key);
    else if (change.kind === "flag")
      diff.changed.push(flagChange(change.key, answered(before!, change.before!), answered(after!, change.after!)));
    else if (change.kind === "segment")
      diff.segments.push({
        segment: change.key,
        change: change.change,
        flags: flagsUsing(change.key, before, after),
        ...segmentRule("before", before, change.key),
        ...segmentRule("after", after, change.key),
      });
  }
  if (before && after) {
    const [was, now] = [before.config.apiKey, after.config.apiKey];
    if (was !== now) diff.apiKey = was === undefined ? "added" : now === undefined ? "removed" : "changed";
    const notifications = { before: before.config.notifications.length, after: after.config.notifications.length };
    if (canonicalJson(before.config.notifications) !== canonicalJson(after.config.notifications)) diff.notifications = notifications;
  }
  diff.events = before && after ? serverEvents(changes) : [];
  diff.status = !before ? "added" : !after ? "removed" : changes.length > 0 || diff.notifications ? "changed" : "unchanged";
  return diff;
}

const answered = (env: LoadedEnvironment, flag: FlagDefinition): FlagDefinition => answeredFlag(flag, env.config.metadata);

function flagChange(flag: string, before: FlagDefinition, after: FlagDefinition): FlagChange {
  const change: FlagChange = { flag, fields: [] };
  const differs = (field: FlagField) => canonicalJson(before[field] ?? {}) !== canonicalJson(after[field] ?? {});
  for (const field of FLAG_FIELDS) if (differs(field)) change.fields.push(field);
  if (differs("state")) change.state = { before: before.state, after: after.state };
  if (differs("defaultVariant")) change.defaultVariant = { before: before.defaultVariant, after: after.defaultVariant };
  if (differs("variants"))
    change.variants = { ...keyChanges(before.variants, after.variants), before: before.variants, after: after.variants };
  if (differs("targeting")) change.targeting = { ...nonEmpty("before", before.targeting), ...nonEmpty("after", after.targeting) };
  if (differs("metadata"))
    change.metadata = { ...keyChanges(before.metadata, after.metadata), before: before.metadata, after: after.metadata };
  return change;
}

/** The keys of a record added, removed, or whose value changed, each sorted. */
function keyChanges(was: Record<string, unknown>, now: Record<string, unknown>): { added: string[]; removed: string[]; changed: string[] } {
  return {
    added: Object.keys(now)
      .filter((k) => !Object.hasOwn(was, k))
      .sort(compare),
    removed: Object.keys(was)
      .filter((k) => !Object.hasOwn(now, k))
      .sort(compare),
    changed: Object.keys(now)
      .filter((k) => Object.hasOwn(was, k) && canonicalJson(was[k]) !== canonicalJson(now[k]))
      .sort(compare),
  };
}

/** `{ [side]: rule }` of a segment on the side where it exists. */
const segmentRule = (side: "before" | "after", env: LoadedEnvironment | undefined, segment: string) =>
  env && Object.hasOwn(env.config.segments, segment) ? { [side]: env.config.segments[segment] } : {};

/** `{ [name]: rule }` for a rule, nothing for no targeting (absent or `{}`). */
const nonEmpty = (name: "before" | "after", rule: JsonObject | undefined) =>
  rule !== undefined && Object.keys(rule).length > 0 ? { [name]: rule } : {};

/** The events eventsFor (the server's own) gives for these changes, timestamps left out. */
function serverEvents(changes: readonly Change[]): ServerEvent[] {
  return eventsFor(changes, "primary", "").map(({ name, data }) => {
    const { timestamp: _t, validUntil: _v, ...rest } = JSON.parse(data) as Record<string, JsonValue>;
    return { event: name, data: rest };
  });
}

/** The flags of either version that use `segment`, directly or through other segments. */
function flagsUsing(segment: string, ...versions: (LoadedEnvironment | undefined)[]): string[] {
  const flags = new Set<string>();
  for (const version of versions) {
    if (!version) continue;
    const { segments, flags: defs } = version.config;
    const uses = (rule: unknown, seen: Set<string>): boolean => {
      for (const ref of segmentRefs(rule)) {
        if (ref === segment) return true;
        if (!seen.has(ref) && Object.hasOwn(segments, ref) && (seen.add(ref), uses(segments[ref], seen))) return true;
      }
      return false;
    };
    for (const [key, def] of Object.entries(defs)) if (uses(def.targeting, new Set())) flags.add(key);
  }
  return [...flags].sort(compare);
}

/** Per environment, the flags whose answers may differ: added, changed, or using a changed segment. */
export function changedFlags(diff: ConfigurationDiff): Map<string, Set<string>> {
  const byEnv = new Map<string, Set<string>>();
  for (const env of diff.environments) {
    const flags = new Set([...env.added, ...env.changed.map((c) => c.flag), ...env.segments.flatMap((s) => s.flags)]);
    if (flags.size > 0) byEnv.set(env.environment, flags);
  }
  return byEnv;
}
