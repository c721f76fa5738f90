/** An environment ready to serve: immutable, built once per load, swapped whole. */
import { createHash, type Hash } from "node:crypto";
import type { EnvironmentConfig } from "../model/types.js";
import type { CompiledFlag } from "../engine/types.js";
import { canonicalJson, compare } from "../model/json.js";
import { streamToken } from "./keys.js";
import { runSteps, type Steps } from "../model/steps.js";

export interface EnvironmentSnapshot {
  readonly name: string;
  readonly apiKey: string;
  /** Token that opens this environment's OFREP event stream and nothing else. */
  readonly streamToken: string;
  readonly config: EnvironmentConfig;
  readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** Flag keys in a stable order, so bulk responses (and their ETags) are deterministic. */
  readonly flagKeys: readonly string[];
  /**
   * Hash of what the files say (flags, segments, metadata): the same files give the same
   * value on every replica, whatever their formatting, comments or key order.
   */
  readonly configEtag: string;
  /** Unix seconds of the load that produced this snapshot. */
  readonly loadedAt: number;
}

/** Flags that answer PARSE_ERROR count too (only when there are some, so other ETags stay as they were). */
export const configEtagOf = (config: EnvironmentConfig): string => etags.get(config) ?? runSteps(configEtagSteps(config));

/** Each configuration's ETag, once made (configurations are immutable once loaded). */
const etags = new WeakMap<EnvironmentConfig, string>();

/** Flag and segment entries hashed between two yields of configEtagSteps. */
const ENTRIES_PER_STEP = 1000;

/**
 * configEtagOf in steps: a reload makes the ETag of a changed environment this way before the
 * snapshot is served (prepareSnapshot), so hashing 10 000 definitions never holds requests up.
 * The hash is of canonicalJson({ flags, invalidFlags?, metadata, segments }), each flag and
 * segment's text made once per definition object (see canonicalOf).
 */
export function* configEtagSteps(config: EnvironmentConfig): Steps<string> {
  const known = etags.get(config);
  if (known !== undefined) return known;
  const hash = createHash("sha256");
  hash.update(`{"flags":`);
  yield* canonicalRecordSteps(config.flags, hash);
  if (config.invalidFlags) hash.update(`,"invalidFlags":${canonicalJson(config.invalidFlags)}`);
  hash.update(`,"metadata":${canonicalJson(config.metadata)},"segments":`);
  yield* canonicalRecordSteps(config.segments, hash);
  hash.update("}");
  const etag = `"${hash.digest("base64url").slice(0, 27)}"`;
  etags.set(config, etag);
  return etag;
}

/**
 * The canonical JSON of a definition, made once per object: the loader shares unchanged
 * definitions between loads (config/memo.ts), so after an edit only the changed ones are written out.
 */
const canonicalTexts = new WeakMap<object, string>();
function canonicalOf(value: unknown): string {
  if (typeof value !== "object" || value === null) return canonicalJson(value);
  let text = canonicalTexts.get(value);
  if (text === undefined) canonicalTexts.set(value, (text = canonicalJson(value)));
  return text;
}

/** canonicalJson of a record into `hash`, its entries' texts from canonicalOf, in steps. */
function* canonicalRecordSteps(record: Readonly<Record<string, unknown>>, hash: Hash): Steps<void> {
  const keys = Object.keys(record).sort(compare);
  let parts: string[] = [];
  let first = true;
  const flush = () => {
    if (parts.length === 0) return;
    hash.update(`${first ? "" : ","}${parts.join(",")}`);
    first = false;
    parts = [];
  };
  hash.update("{");
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (record[key] !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalOf(record[key])}`);
    if (i % ENTRIES_PER_STEP === ENTRIES_PER_STEP - 1) {
      flush();
      yield;
    }
  }
  flush();
  hash.update("}");
}

/**
 * A fresh load of an environment with its broken flags given their last good definition (the
 * definition and compiled flag of `previous`), so an edit that breaks one flag takes nothing
 * from the clients while the other flags' edits apply. A flag with no good version keeps
 * answering PARSE_ERROR. `kept` names the flags that were carried over.
 */
export function keepLastGoodFlags(
  config: EnvironmentConfig,
  flags: ReadonlyMap<string, CompiledFlag>,
  previous: EnvironmentSnapshot | undefined,
): { config: EnvironmentConfig; flags: ReadonlyMap<string, CompiledFlag>; kept: string[] } {
  const invalid = Object.keys(config.invalidFlags ?? {});
  const kept = previous ? invalid.filter((key) => Object.hasOwn(previous.config.flags, key) && previous.flags.has(key)) : [];
  if (!previous || kept.length === 0) return { config, flags, kept };
  const keptFlags = new Map(flags);
  const definitions = { ...config.flags };
  for (const key of kept) {
    Object.defineProperty(definitions, key, { value: previous.config.flags[key], enumerable: true, writable: true, configurable: true });
    keptFlags.set(key, previous.flags.get(key)!);
  }
  return { config: { ...config, flags: definitions }, flags: keptFlags, kept };
}

export function createSnapshot(
  config: EnvironmentConfig,
  flags: ReadonlyMap<string, CompiledFlag>,
  apiKey: string,
  loadedAt = Math.floor(Date.now() / 1000),
): EnvironmentSnapshot {
  let configEtag: string | undefined;
  return Object.freeze({
    name: config.name,
    apiKey,
    streamToken: streamToken(apiKey),
    config,
    flags,
    flagKeys: [...flags.keys()].sort(),
    // Hashed on first use (a bulk answer, a change event): hashing every flag's definition is
    // a tenth of a 10 000-flag start-up, and a server is ready to answer single flags without it.
    // A reload hashes in steps before the swap (prepareSnapshot).
    get configEtag() {
      return (configEtag ??= configEtagOf(config));
    },
    loadedAt,
  });
}

/** Makes a snapshot's ETag in steps, so that serving it (a bulk answer, the change event) finds it made. */
export function* prepareSnapshot(snapshot: EnvironmentSnapshot): Steps<void> {
  yield* configEtagSteps(snapshot.config);
}
