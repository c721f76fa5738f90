/** An environment ready to serve: immutable, built once per load, swapped whole. */
import type { EnvironmentConfig } from "../model/types.js";
import type { CompiledFlag } from "../engine/types.js";
import { canonicalJson, compare, setOwn } from "../model/json.js";
import { contentHash, sha256 } from "./content-hash.js";
import { streamToken } from "./keys.js";

export interface EnvironmentSnapshot {
  readonly name: string;
  readonly apiKey: string;
  /** Token that opens this environment's OFREP event stream and nothing else. */
  readonly streamToken: string;
  readonly config: EnvironmentConfig;
  readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** Flag keys in a stable order, so bulk responses (and their ETags) are deterministic. */
  readonly flagKeys: readonly string[];
  /** The ETag of what the files say (configEtagOf): the same on every replica, whatever their formatting, comments or key order. */
  readonly configEtag: string;
  /** Unix seconds of the load that produced this snapshot. */
  readonly loadedAt: number;
}

/**
 * The ETag of a configuration: the hash of its metadata, its invalid flags (only when there are
 * some) and every flag and segment entry's key and content hash (kept per definition), in key order.
 */
export function configEtagOf(config: EnvironmentConfig): string {
  let etag = etags.get(config);
  if (etag === undefined) {
    const text = `{"flags":${entryHashes(config.flags)},${config.invalidFlags ? `"invalidFlags":${canonicalJson(config.invalidFlags)},` : ""}"metadata":${canonicalJson(config.metadata)},"segments":${entryHashes(config.segments)}}`;
    etags.set(config, (etag = `"${sha256(text).slice(0, 27)}"`));
  }
  return etag;
}

/** Each configuration's ETag, once made (configurations are immutable once loaded). */
const etags = new WeakMap<EnvironmentConfig, string>();

const entryHashes = (record: Readonly<Record<string, unknown>>): string =>
  `{${Object.keys(record)
    .sort(compare)
    .map((key) => `${JSON.stringify(key)}:"${contentHash(record[key])}"`)
    .join(",")}}`;

/**
 * A fresh load of an environment with each broken flag given its definition and compiled flag in
 * `previous`, if it had them: an edit that breaks one flag takes nothing from the clients while the
 * other flags' edits apply (a flag with no good version keeps answering PARSE_ERROR).
 */
export function keepLastGoodFlags(
  config: EnvironmentConfig,
  flags: ReadonlyMap<string, CompiledFlag>,
  previous: EnvironmentSnapshot | undefined,
): { config: EnvironmentConfig; flags: ReadonlyMap<string, CompiledFlag> } {
  if (!previous) return { config, flags };
  const kept = Object.keys(config.invalidFlags ?? {}).filter((key) => Object.hasOwn(previous.config.flags, key) && previous.flags.has(key));
  if (kept.length === 0) return { config, flags };
  const keptFlags = new Map(flags);
  const definitions = { ...config.flags };
  for (const key of kept) {
    setOwn(definitions, key, previous.config.flags[key]!);
    keptFlags.set(key, previous.flags.get(key)!);
  }
  return { config: { ...config, flags: definitions }, flags: keptFlags };
}

export function createSnapshot(config: EnvironmentConfig, flags: ReadonlyMap<string, CompiledFlag>, apiKey: string): EnvironmentSnapshot {
  return Object.freeze({
    name: config.name,
    apiKey,
    streamToken: streamToken(apiKey),
    config,
    flags,
    flagKeys: [...flags.keys()].sort(),
    // Hashed on first use (a bulk answer, a change event): a server answers single flags without it.
    get configEtag() {
      return configEtagOf(config);
    },
    loadedAt: Math.floor(Date.now() / 1000),
  });
}
