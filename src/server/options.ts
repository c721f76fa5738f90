/**
 * What a server is started with. A module of its own so that server.ts and runtime.ts both read it
 * without importing each other.
 */
import type { EventSet } from "../events/encode.js";
import type { FaultRule } from "../fixture/fault-rules.js";
import type { Logger } from "../log/logger.js";
import type { EnvironmentChange } from "../changes/reload.js";
import type { ConfigSource } from "../sources/source.js";

/** Where the configuration comes from: one path, sources (files, directories, URLs), or environments inline. */
export type ServerConfig = { path: string } | { sources: readonly ConfigSource[] } | { environments: Record<string, unknown> };

export interface ServerOptions {
  /** Files (a directory of environment files, or a single file), sources, or environments given inline. */
  source: ServerConfig;
  port: number;
  host: string;
  /**
   * Where generated keys, the admin token and the server's URL are kept; default a private
   * per-user directory of this configuration (see store/state-dir.ts and docs/state.md).
   */
  stateDir?: string;
  /** Serve the valid environments even when others have problems. */
  allowInvalid?: boolean;
  /** Watch the sources (files, polled URLs) and reload on every change (default true). */
  watch?: boolean;
  corsOrigin?: string | string[];
  maxBodyBytes?: number;
  eventSet?: EventSet;
  heartbeatSeconds?: number;
  clientIpHeader?: string;
  maxStreamsPerIp?: number;
  keyGraceSeconds?: number;
  https?: boolean;
  public?: boolean;
  /** false: no admin API and no dashboard page (`--no-admin`). */
  admin?: boolean;
  /** The admin token (`--admin-token`); else FLAGSERVE_ADMIN_TOKEN, else kept in the state directory. */
  adminToken?: string;
  /** Host names the admin API answers to besides loopback and the listen address (`--admin-host`). */
  adminHosts?: string[];
  /** Keep overrides in this YAML file across restarts (`--overrides`). */
  overridesFile?: string;
  logger: Logger;
  /** Told about every applied change, after the events went out. */
  onChanges?: (changes: EnvironmentChange[]) => void;
  /** Static context values (flagd's --context-value): key -> string. */
  contextValues?: Record<string, string>;
  /** Headers copied into the context (flagd's --context-from-header): header name -> context key. */
  contextFromHeaders?: Record<string, string>;
  /** Fault rules active from the start (validated: FaultRulesError). */
  faults?: FaultRule[];
  /** Serve flagd's evaluation and sync services on this port too: gRPC, gRPC-Web and Connect (0: any free port). */
  flagdPort?: number;
  /** Environments a flagd selector may name (besides their keys, which always select). */
  flagdSelectorByName?: string[];
  /** false: no node:http fast path in front of the h3 app (http/fast-path.ts); default true. */
  fastPath?: boolean;
}
