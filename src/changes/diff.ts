/**
 * What changed between two versions of an environment: a pure function of the two
 * configurations. Formatting, comments and key order change nothing, because definitions are
 * compared as canonical JSON; a definition that is the very object it was (the loader shares
 * unchanged ones between loads, config/memo.ts) is not compared at all.
 */
import type { EnvironmentConfig, FlagDefinition, JsonValue, Metadata } from "../model/types.js";
import { canonicalJson, compare } from "../model/json.js";
import { editOf } from "../model/edits.js";
import type { Change, ChangeKind } from "../model/change.js";
import { ITEMS_PER_YIELD, runSteps, type Steps } from "../model/steps.js";

export type { Change, ChangeKind } from "../model/change.js";

/** The parts of an environment a diff looks at. */
export interface Version {
  config: Pick<EnvironmentConfig, "flags" | "segments" | "metadata">;
  apiKey: string;
}

/**
 * Entries created, deleted or (by `same`) updated between two maps, in key order. Only the
 * changes are sorted: an edit of one flag among 10 000 sorts one key, not 20 000. `replaced`
 * gets every key whose entry is not the very object it was, changed or not.
 */
function* diffKeys<T>(
  before: Record<string, T>,
  after: Record<string, T>,
  same: (was: T, now: T) => boolean,
  replaced: string[],
): Steps<{ key: string; change: ChangeKind; before?: T; after?: T }[]> {
  const out: { key: string; change: ChangeKind; before?: T; after?: T }[] = [];
  let seen = 0;
  // Indexed: a step allocates no iterator results.
  const beforeKeys = Object.keys(before);
  for (let i = 0; i < beforeKeys.length; i++) {
    if (++seen % ITEMS_PER_YIELD === 0) yield;
    const key = beforeKeys[i]!;
    const was = before[key];
    const now = Object.hasOwn(after, key) ? after[key] : undefined;
    if (was === undefined) continue;
    if (was !== now) replaced.push(key);
    if (now === undefined) out.push({ key, change: "deleted", before: was });
    else if (!same(was, now)) out.push({ key, change: "updated", before: was, after: now });
  }
  const afterKeys = Object.keys(after);
  for (let i = 0; i < afterKeys.length; i++) {
    if (++seen % ITEMS_PER_YIELD === 0) yield;
    const key = afterKeys[i]!;
    const now = after[key];
    if (now !== undefined && (!Object.hasOwn(before, key) || before[key] === undefined)) {
      replaced.push(key);
      out.push({ key, change: "created", after: now });
    }
  }
  return out.sort((a, b) => compare(a.key, b.key));
}

/** diffKeys for maps with the same keys, where only the entries under `changed` may differ. */
function* diffEdited<T>(
  before: Record<string, T>,
  after: Record<string, T>,
  changed: readonly string[],
  same: (was: T, now: T) => boolean,
  replaced: string[],
): Steps<{ key: string; change: ChangeKind; before?: T; after?: T }[]> {
  const out: { key: string; change: ChangeKind; before?: T; after?: T }[] = [];
  for (let i = 0; i < changed.length; i++) {
    if (i % ITEMS_PER_YIELD === ITEMS_PER_YIELD - 1) yield;
    const key = changed[i]!;
    const was = before[key]!;
    const now = after[key]!;
    if (was === now) continue;
    replaced.push(key);
    if (!same(was, now)) out.push({ key, change: "updated", before: was, after: now });
  }
  return out.sort((a, b) => compare(a.key, b.key));
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
export const diffEnvironments = (before: Version | undefined, after: Version | undefined): Change[] =>
  runSteps(diffEnvironmentsSteps(before, after));

/** diffEnvironments in steps (a reload runs it with the event loop free in between, see runStepsYielding). */
export function* diffEnvironmentsSteps(before: Version | undefined, after: Version | undefined): Steps<Change[]> {
  return (yield* compareEnvironmentsSteps(before, after)).changes;
}

/** What a comparison of two versions found: the changes, and the entries that are not the very objects they were. */
export interface Comparison {
  changes: Change[];
  /** Flag and segment keys whose entry was replaced (changed or not): all an ETag made before must be told (store/snapshot.ts). */
  replaced: { flags: string[]; segments: string[] };
}

/** diffEnvironmentsSteps, with the entries it found replaced. */
export function* compareEnvironmentsSteps(before: Version | undefined, after: Version | undefined): Steps<Comparison> {
  const empty: Version["config"] = { flags: {}, segments: {}, metadata: {} };
  const a = before?.config ?? empty;
  const b = after?.config ?? empty;
  const replaced: Comparison["replaced"] = { flags: [], segments: [] };
  const sameMetadata = a.metadata === b.metadata || canonicalJson(a.metadata) === canonicalJson(b.metadata);
  const sameFlag = (was: FlagDefinition, now: FlagDefinition) =>
    (was === now && sameMetadata) || canonicalJson(answeredFlag(was, a.metadata)) === canonicalJson(answeredFlag(now, b.metadata));
  // An edit of the same flag set (model/edits.ts): the replaced flags alone can answer differently.
  const edit = sameMetadata ? editOf(b.flags) : undefined;
  const flagChanges: Change[] = (
    edit !== undefined && edit.from === a.flags
      ? yield* diffEdited(a.flags, b.flags, edit.changed, sameFlag, replaced.flags)
      : yield* diffKeys(a.flags, b.flags, sameFlag, replaced.flags)
  ).map((c) => ({ kind: "flag", ...c }));
  const segmentChanges: Change[] = (yield* diffKeys<JsonValue>(
    a.segments,
    b.segments,
    (was, now) => was === now || canonicalJson(was) === canonicalJson(now),
    replaced.segments,
  )).map((c) => ({ kind: "segment", ...c }));
  const keyChanges: Change[] = before && after && before.apiKey !== after.apiKey ? [{ kind: "api-key", change: "updated" }] : [];
  return { changes: [...flagChanges, ...segmentChanges, ...keyChanges], replaced };
}
