/**
 * What changed between two versions of an environment, a pure function of the two configurations:
 * definitions compare by the hash of their canonical JSON, so formatting, comments and key order change nothing.
 */
import { flagMetadata, type EnvironmentConfig, type FlagDefinition, type JsonValue, type Metadata } from "../model/types.js";
import { canonicalJson, compare } from "../model/json.js";
import { contentHash } from "../store/content-hash.js";
import type { Change, ChangeKind } from "../model/change.js";

/** The parts of an environment a diff looks at. */
export interface Version {
  config: Pick<EnvironmentConfig, "flags" | "segments" | "metadata">;
  apiKey: string;
}

/** Entries created, deleted or (by `same`) updated between two maps, in key order. */
function diffKeys<T>(before: Readonly<Record<string, T>>, after: Readonly<Record<string, T>>, same: (was: T, now: T) => boolean) {
  const out: { key: string; change: ChangeKind; before?: T; after?: T }[] = [];
  for (const key of Object.keys(before)) {
    const was = before[key]!;
    if (!Object.hasOwn(after, key)) out.push({ key, change: "deleted", before: was });
    else if (!same(was, after[key]!)) out.push({ key, change: "updated", before: was, after: after[key] });
  }
  for (const key of Object.keys(after)) if (!Object.hasOwn(before, key)) out.push({ key, change: "created", after: after[key] });
  return out.sort((a, b) => compare(a.key, b.key));
}

const sameContent = (was: unknown, now: unknown): boolean => was === now || contentHash(was) === contentHash(now);

/** A flag as it answers: with the flag-set metadata merged under its own (what clients see). */
export const answeredFlag = (flag: FlagDefinition, setMetadata: Metadata | undefined): FlagDefinition => ({
  ...flag,
  metadata: flagMetadata(setMetadata, flag.metadata),
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
  const sameMetadata = sameContent(a.metadata, b.metadata);
  const sameFlag = (was: FlagDefinition, now: FlagDefinition) =>
    sameMetadata ? sameContent(was, now) : canonicalJson(answeredFlag(was, a.metadata)) === canonicalJson(answeredFlag(now, b.metadata));
  return [
    ...diffKeys(a.flags, b.flags, sameFlag).map((c): Change => ({ kind: "flag", ...c })),
    ...diffKeys<JsonValue>(a.segments, b.segments, sameContent).map((c): Change => ({ kind: "segment", ...c })),
    ...(before && after && before.apiKey !== after.apiKey ? [{ kind: "api-key", change: "updated" } as const] : []),
  ];
}
