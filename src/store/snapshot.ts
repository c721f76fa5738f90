/** An environment ready to serve: immutable, built once per load, swapped whole. */
import { createHash } from "node:crypto";
import type { EnvironmentConfig } from "../model/types.js";
import type { CompiledFlag } from "../engine/types.js";
import { canonicalJson } from "../model/json.js";
import { streamToken } from "./keys.js";
import { ITEMS_PER_YIELD, runSteps, runStepsYielding, type Steps } from "../model/steps.js";

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

/**
 * Work between two yields of configEtagSteps (ITEMS_PER_YIELD): an entry whose hash was made
 * before counts 1, one hashed now (its canonical text written and hashed) NEW_ENTRY_WORK.
 */
const NEW_ENTRY_WORK = 20;

/**
 * configEtagOf in steps: a reload makes the ETag of a changed environment this way before the
 * snapshot is served (prepareSnapshot), so that 10 000 definitions never hold requests up. The
 * ETag is the hash of the canonical JSON of the metadata and invalid flags and of the sums of the
 * flag and segment entries' hashes (entryHash): a sum needs no sorting, and each entry's hash is
 * made once per definition object (the loader shares unchanged definitions between loads,
 * config/memo.ts), so after an edit only the changed entries are hashed.
 */
export function* configEtagSteps(config: EnvironmentConfig): Steps<string> {
  const known = etags.get(config);
  if (known !== undefined) return known;
  const flags = yield* entriesSumSteps(config.flags);
  const segments = yield* entriesSumSteps(config.segments);
  const text = `{"flags":"${flags}",${config.invalidFlags ? `"invalidFlags":${canonicalJson(config.invalidFlags)},` : ""}"metadata":${canonicalJson(config.metadata)},"segments":"${segments}"}`;
  const etag = `"${createHash("sha256").update(text).digest("base64url").slice(0, 27)}"`;
  etags.set(config, etag);
  return etag;
}

/** A 256-bit number as sixteen 16-bit words, most significant first (as sha256 writes its digest). */
const WORDS = 16;
const WORD = 2 ** 16;

/** The sum (mod 2^256) of the entries' hashes, as 64 hex digits: the same for the same entries in any order. */
function* entriesSumSteps(record: Readonly<Record<string, unknown>>): Steps<string> {
  // Word by word, carries left for the end: sums of up to 2^37 16-bit words stay exact in a double.
  const lanes = new Float64Array(WORDS);
  let work = 0;
  for (const key in record) {
    const value = record[key];
    if (!Object.hasOwn(record, key) || value === undefined) continue;
    const known = knownHash(key, value);
    const digest = known ?? entryHash(key, value);
    for (let i = 0; i < WORDS; i++) lanes[i]! += (digest.charCodeAt(2 * i) << 8) | digest.charCodeAt(2 * i + 1);
    work += known ? 1 : NEW_ENTRY_WORK;
    if (work >= ITEMS_PER_YIELD) {
      work = 0;
      yield;
    }
  }
  let hex = "";
  for (let i = WORDS - 1, carry = 0; i >= 0; i--) {
    const total = lanes[i]! + carry;
    hex = (total % WORD).toString(16).padStart(4, "0") + hex;
    carry = Math.floor(total / WORD);
  }
  return hex;
}

/**
 * Each definition object's entry hash, with the key it was made for (a YAML alias can give two
 * entries the same object). The digest is kept as a 32-character latin1 string: 10 000 of them
 * are plain strings to the collector, where byte arrays would each be a buffer to track.
 */
const entryHashes = new WeakMap<object, { key: string; digest: string }>();

/** An entry's hash made before (for this definition object under this key). */
function knownHash(key: string, value: unknown): string | undefined {
  const made = typeof value === "object" && value !== null ? entryHashes.get(value) : undefined;
  return made?.key === key ? made.digest : undefined;
}

/** An entry's hash: sha256 of `"key":` and the value's canonical JSON, one byte per character; kept per definition object. */
function entryHash(key: string, value: unknown): string {
  const digest = createHash("sha256")
    .update(`${JSON.stringify(key)}:${canonicalJson(value)}`)
    .digest("binary"); // latin1: one character per byte
  if (typeof value === "object" && value !== null) entryHashes.set(value, { key, digest });
  return digest;
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

/**
 * Makes the ETags of the environments loaded at start-up (which are hashed on first use, so as
 * not to delay the first answer), in steps, once the server is answering: the first bulk answer
 * and the first edit then find every unchanged entry's hash made.
 */
export async function prepareSnapshots(snapshots: Iterable<EnvironmentSnapshot>): Promise<void> {
  for (const snapshot of snapshots) await runStepsYielding(prepareSnapshot(snapshot));
}

/** Makes a snapshot's ETag in steps, so that serving it (a bulk answer, the change event) finds it made. */
export function* prepareSnapshot(snapshot: EnvironmentSnapshot): Steps<void> {
  yield* configEtagSteps(snapshot.config);
}
