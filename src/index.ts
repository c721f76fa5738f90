/**
 * flagserve as a library: the same server the CLI runs, started in-process for test suites.
 *
 *   const server = await createFlagServer({ config: { environments: { test: { apiKey: "k", flags } } } });
 *   // ... OFREP clients at server.url with X-API-Key: server.keys.test
 *   await server.update("test", { apiKey: "k", flags: changedFlags }); // same diff and events as a file edit
 *   await server.overrides.set("test", "new-checkout", { variant: "on" }); // the same, without touching the config
 *   await server.close();
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventSet } from "./events/encode.js";
import type { JsonObject, JsonValue, Metadata, NotificationTarget } from "./model/types.js";
import type { FaultRule } from "./fixture/fault-rules.js";
import type { SessionSummary, SessionView } from "./fixture/sessions.js";
import { silentLogger, type Logger } from "./log/logger.js";
import { startServer, type ServerConfig } from "./server/server.js";
import type { OverrideService } from "./admin/index.js";
import { createSource } from "./sources/index.js";

export { EnrichmentError } from "./fixture/enrich.js";
export { FaultRulesError, type FaultRoute, type FaultRule, type FaultStatus } from "./fixture/fault-rules.js";
export { SESSION_HEADER, type RecordedEvaluation, type SessionSummary, type SessionView } from "./fixture/sessions.js";
export { InvalidConfigError } from "./server/server.js";
export { AdminError, type Override, type OverrideList, type OverrideService } from "./admin/index.js";
export { formatProblem, type Problem } from "./model/types.js";
export { testFlags, testExitCode, type TestFlagsOptions, type TestReport, type CaseResult, type CoverageSummary } from "./testing/index.js";
export { diffConfigurations, GitError, type DiffOptions, type DiffReport, type EnvironmentDiff, type FlagChange } from "./review/index.js";
export type { Logger } from "./log/logger.js";
export type { JsonObject, JsonValue, Metadata, NotificationTarget } from "./model/types.js";

/** One flag as written in a file (flagd's format). */
export interface FlagInput {
  state?: "ENABLED" | "DISABLED";
  variants: Record<string, JsonValue>;
  defaultVariant?: string | null;
  targeting?: JsonObject;
  metadata?: Metadata;
}

/** One environment as written in a file. */
export interface EnvironmentInput {
  apiKey?: string;
  metadata?: Metadata;
  segments?: Record<string, JsonValue>;
  /** flagd's name for segments. */
  $evaluators?: Record<string, JsonValue>;
  flags: Record<string, FlagInput>;
  notifications?: NotificationTarget[];
}

export interface FlagServerOptions {
  /**
   * A path (a directory of environment files, or one file) or an http(s):// URL, watched (a
   * URL: polled) for changes; several of them; or the environments inline, by name.
   */
  config: string | readonly string[] | { environments: Record<string, EnvironmentInput> };
  /** Default 0: any free port (read `url`). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Where generated keys and the admin token are kept. Default: the configuration's private
   * per-user state directory (docs/state.md); for inline environments a temporary directory
   * removed by `close()`.
   */
  stateDir?: string;
  /** Watch a config path for changes, poll URLs (default true). */
  watch?: boolean;
  /** Seconds between two fetches of a URL (default 5). */
  pollIntervalSeconds?: number;
  eventSet?: EventSet;
  heartbeatSeconds?: number;
  /** Seconds a replaced key keeps working (default 3600, as `--key-grace`). */
  keyGraceSeconds?: number;
  corsOrigin?: string | string[];
  /** Serve the admin API and the dashboard page at `/` (default true). */
  admin?: boolean;
  /** The admin token; default FLAGSERVE_ADMIN_TOKEN, else one kept in the state directory. */
  adminToken?: string;
  /** Keep overrides in this YAML file across restarts. */
  overridesFile?: string;
  /** Host names the admin API answers to besides loopback names and the listen address. */
  adminHosts?: string[];
  /** Where log lines go; default nowhere. */
  logger?: Logger;
  /**
   * Static values added to every evaluation context, as flagd's `--context-value`: strings,
   * over the request's context.
   */
  contextValues?: Record<string, string>;
  /**
   * Request headers copied into the context, as flagd's `--context-from-header`: header name ->
   * context key; over both the request's context and `contextValues`.
   */
  contextFromHeaders?: Record<string, string>;
  /** Fault rules active from the start (see `setFaults`). */
  faults?: FaultRule[];
  /**
   * Serve flagd's evaluation and sync services on this port too (gRPC, gRPC-Web and Connect), for
   * flagd's providers in RPC, in-process and web mode (0: any free port; read `flagdPort`). Off when absent.
   */
  flagdPort?: number;
  /** Environments a flagd provider may select by name; keys always select (see docs/flagd.md). */
  flagdSelectorByName?: string[];
  /**
   * false: every request is answered by the h3 app, never by the node:http fast path in front of
   * it (default true). The answers are the same; this is for comparing the two.
   */
  fastPath?: boolean;
}

export interface FlagServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`: the `baseUrl` of the OFREP providers. */
  readonly url: string;
  /** The flagd port (gRPC, gRPC-Web and Connect), with `flagdPort` set: a flagd provider's `port`. */
  readonly flagdPort?: number;
  /** Environment name -> API key, as of now. */
  readonly keys: Readonly<Record<string, string>>;
  /**
   * Replaces one environment's configuration: validated like a file (rejects with
   * InvalidConfigError and the same messages), then diffed, with the same change events.
   */
  update(env: string, config: EnvironmentInput): Promise<void>;
  /**
   * Replaces the active fault rules (`[]` clears them); throws FaultRulesError naming every
   * problem, changing nothing. A `drop` rule closes the matching open streams at once.
   */
  setFaults(rules: FaultRule[]): FaultRule[];
  /** The active fault rules. */
  faults(): FaultRule[];
  /** The evaluations recorded for `X-Flagserve-Session: id`, oldest first (empty when none). */
  session(id: string): SessionView;
  /** The sessions held, with their counts. */
  sessions(): SessionSummary[];
  /** Forgets a session; true when there was one. */
  clearSession(id: string): boolean;
  /**
   * Overrides over the file definitions, per environment: `set(env, flag, {variant: "on"})` or
   * `{state: "DISABLED"}`, `clear(env, flag?)`, `list()`. Same checks (AdminError with status
   * 400/404/422) and the same change events as the admin API.
   */
  readonly overrides: OverrideService;
  /** The admin API's bearer token (undefined with `admin: false`). */
  readonly adminToken?: string;
  close(): Promise<void>;
}

export async function createFlagServer(options: FlagServerOptions): Promise<FlagServer> {
  const { config } = options;
  const inline = typeof config !== "string" && !Array.isArray(config);
  const tempState = inline && options.stateDir === undefined ? await mkdtemp(join(tmpdir(), "flagserve-")) : undefined;
  let server;
  try {
    server = await startServer({
      source: sourceOf(config, options),
      port: options.port ?? 0,
      host: options.host ?? "127.0.0.1",
      stateDir: options.stateDir ?? tempState,
      watch: options.watch,
      eventSet: options.eventSet,
      heartbeatSeconds: options.heartbeatSeconds,
      keyGraceSeconds: options.keyGraceSeconds,
      corsOrigin: options.corsOrigin,
      admin: options.admin,
      adminToken: options.adminToken,
      overridesFile: options.overridesFile,
      adminHosts: options.adminHosts,
      logger: options.logger ?? silentLogger,
      contextValues: options.contextValues,
      contextFromHeaders: options.contextFromHeaders,
      faults: options.faults,
      flagdPort: options.flagdPort,
      flagdSelectorByName: options.flagdSelectorByName,
      fastPath: options.fastPath,
    });
  } catch (error) {
    if (tempState) await rm(tempState, { recursive: true, force: true });
    throw error;
  }
  const running = server;
  return {
    url: running.url,
    flagdPort: running.flagdPort,
    get keys() {
      return running.keys();
    },
    async update(env, config) {
      await running.update(env, config);
    },
    setFaults: (rules) => running.faults.set(rules),
    faults: () => running.faults.rules(),
    session: (id) => running.sessions.get(id),
    sessions: () => running.sessions.list(),
    clearSession: (id) => running.sessions.delete(id),
    overrides: running.overrides,
    adminToken: running.adminToken,
    async close() {
      await running.close();
      if (tempState) await rm(tempState, { recursive: true, force: true });
    },
  };
}

function sourceOf(config: FlagServerOptions["config"], options: FlagServerOptions): ServerConfig {
  if (typeof config === "string") return { sources: [createSource(config, urlOptions(options))] };
  if (Array.isArray(config)) return { sources: config.map((spec: string) => createSource(spec, urlOptions(options))) };
  return { environments: (config as { environments: Record<string, EnvironmentInput> }).environments };
}

const urlOptions = (options: FlagServerOptions) =>
  options.pollIntervalSeconds === undefined ? {} : { pollIntervalMs: options.pollIntervalSeconds * 1000 };
