/**
 * What changed between two versions of an environment: a pure function of the two
 * configurations. Formatting, comments and key order change nothing, because definitions are
 * compared as canonical JSON; a definition that is the very object it was (the loader shares
 * unchanged ones between loads, config/memo.ts) is not compared at all.
 */
import type { EnvironmentConfig, FlagDefinition, JsonValue, Metadata } from "../model/types.js";
import { canonicalJson } from "../model/json.js";
import type { Change, ChangeKind } from "../model/change.js";

export type { Change, ChangeKind } from "../model/change.js";

/** The parts of an environment a diff looks at. */
export interface Version {
  config: Pick<EnvironmentConfig, "flags" | "segments" | "metadata">;
  apiKey: string;
}

/** Entries created, deleted or (by `same`) updated between two maps, in key order. */
function diffKeys<T>(before: Record<string, T>, after: Record<string, T>, same: (was: T, now: T) => boolean) {
  const out: { key: string; change: ChangeKind; before?: T; after?: T }[] = [];
  for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const was = Object.hasOwn(before, key) ? before[key] : undefined;
    const now = Object.hasOwn(after, key) ? after[key] : undefined;
    if (was === undefined && now !== undefined) out.push({ key, change: "created", after: now });
    else if (was !== undefined && now === undefined) out.push({ key, change: "deleted", before: was });
    else if (was !== undefined && now !== undefined && !same(was, now)) out.push({ key, change: "updated", before: was, after: now });
  }
  return out;
}

/** A flag as it answers: with the flag-set metadata merged under its own (what clients see). */
export const answeredFlag = (flag: FlagDefinition, setMetadata: Metadata | undefined): FlagDefinition => ({
  ...flag,
  metadata: { ...setMetadata, ...flag.metadata },
});

/**
 * Changes from `before` to `after`; either may be absent (an environment that appeared or went
 * away). A flag counts as changed when what it answers could change: its definition, or the
 * flag-set metadata merged into its responses.
 */
export function diffEnvironments(before: Version | undefined, after: Version | undefined): Change[] {
  const empty: Version["config"] = { flags: {}, segments: {}, metadata: {} };
  const a = before?.config ?? empty;
  const b = after?.config ?? empty;
  const sameMetadata = a.metadata === b.metadata || canonicalJson(a.metadata) === canonicalJson(b.metadata);
  const flagChanges: Change[] = diffKeys<FlagDefinition>(
    a.flags,
    b.flags,
    (was, now) => (was === now && sameMetadata) || canonicalJson(answeredFlag(was, a.metadata)) === canonicalJson(answeredFlag(now, b.metadata)),
  ).map((c) => ({ kind: "flag", ...c }));
  const segmentChanges: Change[] = diffKeys<JsonValue>(a.segments, b.segments, (was, now) => was === now || canonicalJson(was) === canonicalJson(now)).map(
    (c) => ({ kind: "segment", ...c }),
  );
  const keyChanges: Change[] = before && after && before.apiKey !== after.apiKey ? [{ kind: "api-key", change: "updated" }] : [];
  return [...flagChanges, ...segmentChanges, ...keyChanges];
}
