/** An environment ready to serve: immutable, built once per load, swapped whole. */
import { createHash } from "node:crypto";
import type { EnvironmentConfig } from "../config/types.js";
import type { CompiledFlag } from "../engine/types.js";
import { canonicalJson } from "./canonical.js";
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

export const configEtagOf = (config: EnvironmentConfig): string =>
  `"${createHash("sha256")
    .update(canonicalJson({ flags: config.flags, segments: config.segments, metadata: config.metadata }))
    .digest("base64url")
    .slice(0, 27)}"`;

export function createSnapshot(
  config: EnvironmentConfig,
  flags: ReadonlyMap<string, CompiledFlag>,
  apiKey: string,
  loadedAt = Math.floor(Date.now() / 1000),
): EnvironmentSnapshot {
  return Object.freeze({
    name: config.name,
    apiKey,
    streamToken: streamToken(apiKey),
    config,
    flags,
    flagKeys: [...flags.keys()].sort(),
    configEtag: configEtagOf(config),
    loadedAt,
  });
}
