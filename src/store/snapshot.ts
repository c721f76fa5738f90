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
 * Work between two yields of configEtagSteps (ITEMS_PER_YIELD): an entry added to a sum counts 1,
 * its hash (its canonical text written and hashed) HASH_WORK more.
 */
const HASH_WORK = 20;

/**
 * What changed since a configuration whose ETag was made: the flag and segment keys whose entries
 * are not the very objects they were (changes/diff.ts finds them while it compares).
 */
export interface EtagBase {
  config: EnvironmentConfig;
  replaced: { flags: readonly string[]; segments: readonly string[] };
}

/**
 * configEtagOf in steps: a reload makes the ETag of a changed environment this way before the
 * snapshot is served (prepareSnapshot), so that 10 000 definitions never hold requests up. The
 * ETag is the hash of the canonical JSON of the metadata and invalid flags and of the sums of the
 * flag and segment entries' hashes (entryHash): a sum needs no sorting, and it can be updated.
 * From a `base` whose ETag was made, only the replaced entries are hashed: the old entry's hash
 * taken out of the sum, the new one's put in. Else every entry is hashed.
 */
export function* configEtagSteps(config: EnvironmentConfig, base?: EtagBase): Steps<string> {
  const known = etags.get(config);
  if (known !== undefined) return known;
  const last = base && sumsOf.get(base.config);
  const sums: EntrySums = last
    ? {
        flags: yield* updatedSumSteps(last.flags, base!.config.flags, config.flags, base!.replaced.flags),
        segments: yield* updatedSumSteps(last.segments, base!.config.segments, config.segments, base!.replaced.segments),
      }
    : { flags: yield* entriesSumSteps(config.flags), segments: yield* entriesSumSteps(config.segments) };
  const text = `{"flags":"${hexOf(sums.flags)}",${config.invalidFlags ? `"invalidFlags":${canonicalJson(config.invalidFlags)},` : ""}"metadata":${canonicalJson(config.metadata)},"segments":"${hexOf(sums.segments)}"}`;
  const etag = `"${createHash("sha256").update(text).digest("base64url").slice(0, 27)}"`;
  etags.set(config, etag);
  sumsOf.set(config, sums);
  return etag;
}

/**
 * A sum (mod 2^256) of entry hashes, as sixteen 16-bit words, most significant first (as sha256
 * writes its digest), each word summed on its own and the carries left for hexOf: sums of up to
 * 2^37 words stay exact in a double (and a word may go below zero while entries are taken out).
 */
type Sum = Float64Array;
const WORDS = 16;
const WORD = 2 ** 16;

interface EntrySums {
  flags: Sum;
  segments: Sum;
}

/** The sums behind each ETag made: the next configuration's are updated from them. */
const sumsOf = new WeakMap<EnvironmentConfig, EntrySums>();

/** Adds (sign 1) or takes out (sign -1) one entry's hash. */
function addHash(sum: Sum, digest: string, sign: 1 | -1): void {
  for (let i = 0; i < WORDS; i++) sum[i]! += sign * ((digest.charCodeAt(2 * i) << 8) | digest.charCodeAt(2 * i + 1));
}

/** The sum of every entry's hash. */
const entriesSumSteps = (record: Readonly<Record<string, unknown>>): Steps<Sum> =>
  updatedSumSteps(new Float64Array(WORDS), {}, record, Object.keys(record));

/** `last` (the sum of `before`'s entries) with the entries under `replaced` taken from `before` to `after`. */
function* updatedSumSteps(
  last: Sum,
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
  replaced: readonly string[],
): Steps<Sum> {
  const sum = last.slice();
  let work = 0;
  const add = (key: string, value: unknown, sign: 1 | -1) => {
    if (value === undefined) return;
    addHash(sum, entryHash(key, value), sign);
    work += 1 + HASH_WORK;
  };
  for (let i = 0; i < replaced.length; i++) {
    const key = replaced[i]!;
    add(key, Object.hasOwn(before, key) ? before[key] : undefined, -1);
    add(key, Object.hasOwn(after, key) ? after[key] : undefined, 1);
    if (work >= ITEMS_PER_YIELD) {
      work = 0;
      yield;
    }
  }
  return sum;
}

/** A sum as 64 hex digits, its carries made (mod 2^256). */
function hexOf(sum: Sum): string {
  let hex = "";
  for (let i = WORDS - 1, carry = 0; i >= 0; i--) {
    const total = sum[i]! + carry;
    carry = Math.floor(total / WORD);
    hex = (total - carry * WORD).toString(16).padStart(4, "0") + hex;
  }
  return hex;
}

/** An entry's hash: sha256 of `"key":` and the value's canonical JSON, one character per byte (latin1). */
const entryHash = (key: string, value: unknown): string =>
  createHash("sha256")
    .update(`${JSON.stringify(key)}:${canonicalJson(value)}`)
    .digest("binary");

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
 * finds its ETag made, and the first edit's ETag is updated from its sums.
 */
export async function prepareSnapshots(snapshots: Iterable<EnvironmentSnapshot>): Promise<void> {
  for (const snapshot of snapshots) await runStepsYielding(prepareSnapshot(snapshot));
}

/** Makes a snapshot's ETag in steps, so that serving it (a bulk answer, the change event) finds it made; from `base` when given. */
export function* prepareSnapshot(snapshot: EnvironmentSnapshot, base?: EtagBase): Steps<void> {
  yield* configEtagSteps(snapshot.config, base);
}
