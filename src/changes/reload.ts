/**
 * From a fresh load to the live state: config -> snapshots -> diff -> store swap -> events. An
 * environment the load could not use keeps its last good snapshot and produces no event; a flag
 * broken by an edit keeps its last good definition.
 */
import type { ConfigLoad, LoadedEnvironment } from "../config/index.js";
import { formatProblem, type Problem } from "../model/types.js";
import type { Logger } from "../log/logger.js";
import { canonicalJson } from "../model/json.js";
import { keyDigest, recordedGrace, redactKey, resolveKeys } from "../store/keys.js";
import { createSnapshot, keepLastGoodFlags, type EnvironmentSnapshot } from "../store/snapshot.js";
import type { FlagStore, Retirement } from "../store/store.js";
import { diffEnvironments } from "./diff.js";
import type { Change } from "../model/change.js";

export interface EnvironmentChange {
  env: string;
  changes: Change[];
  before?: EnvironmentSnapshot;
  after?: EnvironmentSnapshot;
}

/** The event hub (src/events/hub.ts) as a reload sees it: the hub sits above this layer. */
export interface ChangeStreams {
  publish(snapshot: EnvironmentSnapshot, changes: readonly Change[], at?: Date, keyValidUntil?: Date): void;
  /** Closes the streams opened with a key (its digest); returns how many. */
  closeStreamsOf(env: string, digest: string): number;
  removeEnvironment(env: string): void;
}

export interface ReloadContext {
  store: FlagStore;
  hub: ChangeStreams;
  logger: Logger;
  stateDir: string;
  /** Seconds a replaced key keeps working (and its streams stay open). */
  keyGraceSeconds: number;
  /** Told when replaced keys stop working, after the hub closed their streams: the flagd port's are checked again. */
  keysRevoked(): void;
  /** Told about every applied change, after the events (notifications, the admin feed). */
  onChanges?: (changes: EnvironmentChange[]) => void;
  /** A layer over each loaded environment before it becomes a snapshot (the admin overrides), told as the store stops serving one. */
  layer?: { apply(loaded: LoadedEnvironment): LoadedEnvironment; remove(env: string): void };
}

export interface ApplyOptions {
  /** Only the environments in the load are touched; the others stay as they are. */
  partial?: boolean;
  /** The store's problems stay as they are (re-applying the layer is not a load of the files). */
  keepProblems?: boolean;
}

/** One apply at a time per store: a load is built and swapped in whole before the next starts. */
const applying = new WeakMap<FlagStore, Promise<unknown>>();

/**
 * Applies a load to the store and announces what changed; returns the changes applied. A
 * function is called once the previous apply is done, so it sees the state that one left.
 */
export function applyLoad(
  load: ConfigLoad | (() => ConfigLoad),
  ctx: ReloadContext,
  options: ApplyOptions = {},
): Promise<EnvironmentChange[]> {
  const run = (applying.get(ctx.store) ?? Promise.resolve()).then(() => applyNow(typeof load === "function" ? load() : load, ctx, options));
  // Settled to nothing: the chain must not keep the last changes (and the snapshots they name) alive.
  const forget = () => undefined;
  applying.set(ctx.store, run.then(forget, forget));
  return run;
}

async function applyNow(load: ConfigLoad, ctx: ReloadContext, options: ApplyOptions): Promise<EnvironmentChange[]> {
  const { store, hub, logger } = ctx;
  // What waits comes first. From the layer to the swap nothing does: what the layer changes (an
  // override an edit drops) is seen together with the snapshots made with it, never before them.
  const loaded = [...load.environments.values()];
  const { keys, generated, persistError } = await resolveKeys(
    ctx.stateDir,
    loaded.map((e) => e.config),
  );
  if (persistError)
    logger.warn(`generated keys could not be saved in ${ctx.stateDir} (${persistError.message}); they will change on restart`);
  const recordedGraces = await gracesOfRotations(ctx, keys);
  const previous = store.environments;
  const valid = loaded.map((environment) => ctx.layer?.apply(environment) ?? environment);
  const next = nextSnapshots(load, valid, keys, previous, options);
  const applied = changesBetween(previous, next);
  // A replaced key is retired before the swap: it must keep working from the moment the new one does.
  const graces = new Map<string, { graceSeconds: number; retirement?: Retirement }>();
  for (const { env, before, after } of applied) {
    if (!before || !after || before.apiKey === after.apiKey) continue;
    const graceSeconds = recordedGraces.get(env) ?? ctx.keyGraceSeconds;
    graces.set(env, { graceSeconds, retirement: store.retireKey(env, before.apiKey, graceSeconds * 1000) });
  }
  store.replace(next.values(), options.keepProblems ? store.problems : problemsAfter(load, options.partial ? store.problems : new Map()));
  // Reported once the store says so too (`/readyz`), so a reader of the log never races it.
  logProblems(load, next, logger, options);

  for (const change of applied) {
    const { env, before, after } = change;
    if (!after) {
      hub.removeEnvironment(env);
      ctx.layer?.remove(env);
      logger.info(`environment ${env} removed: its key no longer works`);
      continue;
    }
    if (!before) {
      logger.info(`environment ${env} added, key ${generated.includes(env) ? after.apiKey : redactKey(after.apiKey)}`);
      continue;
    }
    const grace = graces.get(env);
    const at = new Date();
    hub.publish(after, change.changes, at, new Date(at.getTime() + (grace?.graceSeconds ?? 0) * 1000));
    logger.info(`${env}: ${describeChanges(change.changes)}`);
    if (grace) revokeLater(ctx, env, before.apiKey, grace.retirement);
  }
  if (applied.length > 0) ctx.onChanges?.(applied);
  return applied;
}

/** The grace `keys rotate` recorded for each key this load replaces (`--revoke-now`: 0); else `--key-grace` applies. */
async function gracesOfRotations(ctx: ReloadContext, keys: ReadonlyMap<string, string>): Promise<Map<string, number>> {
  const graces = new Map<string, number>();
  for (const [env, key] of keys) {
    const oldKey = ctx.store.environments.get(env)?.apiKey;
    const recorded = oldKey === undefined || oldKey === key ? undefined : await recordedGrace(ctx.stateDir, env, oldKey);
    if (recorded !== undefined) graces.set(env, recorded);
  }
  return graces;
}

/** The store's problems after this load: the load's, over `kept`; none for the environments it loaded. */
function problemsAfter(load: ConfigLoad, kept: ReadonlyMap<string, Problem[]>): Map<string, Problem[]> {
  const problems = new Map(kept);
  for (const [env, list] of load.problems) problems.set(env, list);
  for (const env of load.environments.keys()) if (!load.problems.has(env)) problems.delete(env);
  return problems;
}

/** The snapshots to serve: the loaded environments', and the last good ones of the environments the load could not replace. */
function nextSnapshots(
  load: ConfigLoad,
  valid: readonly LoadedEnvironment[],
  keys: ReadonlyMap<string, string>,
  previous: ReadonlyMap<string, EnvironmentSnapshot>,
  options: ApplyOptions,
): Map<string, EnvironmentSnapshot> {
  const next = new Map<string, EnvironmentSnapshot>(options.partial ? previous : []);
  // When the configuration could not be read at all (a problem under ""), nothing is removed: a vanished directory is not an edit.
  const unreadable = load.problems.has("");
  for (const [env, snapshot] of previous) {
    if (!load.environments.has(env) && (load.problems.has(env) || unreadable)) next.set(env, snapshot);
  }
  for (const loaded of valid) {
    const name = loaded.config.name;
    const before = previous.get(name);
    const { config, flags } = keepLastGoodFlags(loaded.config, loaded.flags, before);
    const apiKey = keys.get(name)!;
    // The loader reuses an unchanged environment whole (config/memo.ts): so does the store.
    const same = before !== undefined && before.config === config && before.flags === flags && before.apiKey === apiKey;
    next.set(name, same ? before : createSnapshot(config, flags, apiKey));
  }
  return next;
}

/**
 * What changed per environment, removals included (none when partial: `next` has every previous
 * environment). An unchanged environment's snapshot is put back into `next`: its ETag and timestamps stay.
 */
function changesBetween(previous: ReadonlyMap<string, EnvironmentSnapshot>, next: Map<string, EnvironmentSnapshot>): EnvironmentChange[] {
  const applied: EnvironmentChange[] = [];
  for (const [env, snapshot] of next) {
    const before = previous.get(env);
    if (before === snapshot) continue;
    const changes = diffEnvironments(before, snapshot);
    if (before && changes.length === 0 && undiffedParts(before) === undiffedParts(snapshot)) {
      next.set(env, before);
      continue;
    }
    // With no definition changed, a new `notifications:` list, a flag newly broken or a URL read
    // from another address takes effect silently.
    if (!before || changes.length > 0) applied.push({ env, changes, before, after: snapshot });
  }
  for (const [env, before] of previous) if (!next.has(env)) applied.push({ env, changes: diffEnvironments(before, undefined), before });
  return applied;
}

/** The parts of a snapshot the diff does not compare, as one text. */
const undiffedParts = ({ config }: EnvironmentSnapshot): string =>
  canonicalJson([config.notifications, config.invalidFlags ?? {}, config.redirects]);

/** The load's problems, which environments keep their last good configuration, and what each broken flag answers. */
function logProblems(load: ConfigLoad, next: ReadonlyMap<string, EnvironmentSnapshot>, logger: Logger, options: ApplyOptions): void {
  for (const [env, list] of load.problems) {
    for (const problem of list) logger.error(formatProblem(problem), { ...problem });
    if (env !== "" && next.has(env) && !load.environments.has(env)) logger.warn(`${env}: keeping the last good configuration`);
  }
  // (Not again when only the layer is re-applied: nothing about the files changed.)
  for (const [env, { config }] of options.keepProblems ? [] : load.environments) {
    // Kept here or by the layer (which keeps an overridden flag's last good definition itself).
    const served = next.get(env)?.config.flags ?? {};
    for (const key of Object.keys(config.invalidFlags ?? {})) {
      const kept = Object.hasOwn(served, key);
      logger.warn(`${env}: flag ${key} ${kept ? "keeps its last good definition" : "answers PARSE_ERROR until its problems are fixed"}`);
    }
  }
}

/** `api-key-rotated` has been sent; the old key (retired) and the streams opened with it end after the grace period. */
function revokeLater(ctx: ReloadContext, env: string, oldKey: string, retirement: Retirement | undefined): void {
  const revoke = () => {
    // Ended here, not left to the store's deadline: a timer may fire a moment before it. Only
    // this rotation's grace: the key may be current again, or in a later rotation's grace.
    if (retirement && !ctx.store.endRetirement(retirement)) return;
    // Only the old key's streams: a later rotation's clients may already be on a newer key.
    const closed = ctx.hub.closeStreamsOf(env, retirement?.digest ?? keyDigest(oldKey));
    ctx.keysRevoked();
    ctx.logger.info(`${env}: old key revoked${closed ? `, ${closed} stream(s) closed` : ""}`);
  };
  // No retirement: no grace (`--revoke-now`, `--key-grace 0`).
  if (!retirement) revoke();
  else {
    ctx.logger.info(`${env}: the old key works until ${new Date(retirement.until).toISOString()}`);
    setTimeout(revoke, retirement.until - Date.now()).unref();
  }
}

/**
 * Ends the grace of `env`'s replaced keys now (`keys revoke`, the admin API): they stop working
 * and the streams opened with them close. Returns how many keys were revoked.
 */
export function revokeOldKeys(ctx: Pick<ReloadContext, "store" | "hub" | "logger" | "keysRevoked">, env: string): number {
  const digests = ctx.store.revokeRetired(env);
  if (digests.length === 0) return 0;
  const closed = digests.reduce((n, digest) => n + ctx.hub.closeStreamsOf(env, digest), 0);
  ctx.keysRevoked();
  ctx.logger.info(`${env}: ${digests.length} old key(s) revoked on request${closed ? `, ${closed} stream(s) closed` : ""}`);
  return digests.length;
}

function describeChanges(changes: readonly Change[]): string {
  return changes.map((c) => (c.kind === "api-key" ? "key rotated" : `${c.kind} ${c.key} ${c.change}`)).join(", ");
}
