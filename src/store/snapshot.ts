/** An environment ready to serve: immutable, built once per load, swapped whole. */
import { createHash } from "node:crypto";
import type { EnvironmentConfig } from "../model/types.js";
import type { CompiledFlag } from "../engine/types.js";
import { canonicalJson, compare } from "../model/json.js";
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
  /**
   * Hash of what the files say (flags, segments, metadata): the same files give the same
   * value on every replica, whatever their formatting, comments or key order.
   */
  readonly configEtag: string;
  /** Unix seconds of the load that produced this snapshot. */
  readonly loadedAt: number;
}

/** Flags that answer PARSE_ERROR count too (only when there are some, so other ETags stay as they were). */
export const configEtagOf = (config: EnvironmentConfig): string =>
  `"${createHash("sha256")
    .update(
      // canonicalJson of { flags, invalidFlags?, metadata, segments }, each flag and segment's text made once (see canonicalOf).
      `{"flags":${canonicalRecord(config.flags)}${config.invalidFlags ? `,"invalidFlags":${canonicalJson(config.invalidFlags)}` : ""},` +
        `"metadata":${canonicalJson(config.metadata)},"segments":${canonicalRecord(config.segments)}}`,
    )
    .digest("base64url")
    .slice(0, 27)}"`;

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

/** canonicalJson of a record, its entries' texts from canonicalOf. */
function canonicalRecord(record: Readonly<Record<string, unknown>>): string {
  const parts: string[] = [];
  for (const key of Object.keys(record).sort(compare)) {
    if (record[key] !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalOf(record[key])}`);
  }
  return `{${parts.join(",")}}`;
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
    get configEtag() {
      return (configEtag ??= configEtagOf(config));
    },
    loadedAt,
  });
}
