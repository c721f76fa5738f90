/**
 * A running flagserve: configuration loaded, keys resolved, snapshots in the store, the HTTP app
 * listening, and the sources followed (files watched, URLs polled), every change a reload. The
 * CLI and the programmatic API both start it through here.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { loadSources, LoadMemo, type ConfigLoad } from "../config/index.js";
import { formatProblem, type Problem } from "../model/types.js";
import type { OverrideService } from "../admin/index.js";
import { applyLoad, revokeOldKeys, type EnvironmentChange, type ReloadContext } from "../changes/reload.js";
import { createReloader, type Reloader } from "../changes/reloader.js";
import { createEnricher } from "../fixture/enrich.js";
import { validateFaultRules } from "../fixture/fault-rules.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { FlagdListener } from "../flagd/server.js";
import type { SessionStore } from "../fixture/sessions.js";
import { localUrl } from "../http/hosts.js";
import type { Metrics } from "../http/metrics.js";
import { DEFAULT_KEY_GRACE_SECONDS } from "../store/key-grace.js";
import { stateFilePath } from "../store/keys.js";
import { defaultStateDir } from "../store/state-dir.js";
import { forgetServer, recordServer } from "../admin/records.js";
import type { FlagStore } from "../store/store.js";
import { recordFile } from "../sources/files.js";
import { FileSource } from "../sources/files-source.js";
import { InlineSource } from "../sources/inline-source.js";
import { InputSet } from "../sources/inputs.js";
import { INLINE_ID, sourceKindOf, type ConfigSource } from "../sources/source.js";
import type { ServerConfig, ServerOptions } from "./options.js";
import type { Runtime } from "./runtime.js";

export type { ServerConfig, ServerOptions } from "./options.js";

export interface RunningServer {
  url: string;
  /** The flagd port bound, with `flagdPort`. */
  flagdPort?: number;
  store: FlagStore;
  /** Environment name -> API key. */
  keys(): Record<string, string>;
  /** Overrides over the file definitions (the same operations as the admin API). */
  overrides: OverrideService;
  /** The admin token; undefined with the admin API off. */
  adminToken?: string;
  /** Replaces one environment's configuration, through the same validation, diff and events as a file edit. */
  update(env: string, config: unknown): Promise<EnvironmentChange[]>;
  /** The active fault rules (set, read, clear). */
  faults: FaultInjector;
  /** Evaluations recorded per `X-Flagserve-Session`. */
  sessions: SessionStore;
  close(): Promise<void>;
}

/** The configuration has problems and `allowInvalid` was not set. */
export class InvalidConfigError extends Error {
  constructor(readonly problems: Problem[]) {
    super(`invalid configuration:\n${problems.map(formatProblem).join("\n")}`);
  }
}

export { defaultStateDir } from "../store/state-dir.js";

const allProblems = (load: ConfigLoad): Problem[] => [...load.problems.values()].flat();

/** Whether applying the load would remove a served environment. */
const removesEnvironments = (load: ConfigLoad, store: FlagStore): boolean =>
  !load.problems.has("") && [...store.environments.keys()].some((env) => !load.environments.has(env) && !load.problems.has(env));

/**
 * How often the inputs of the last reload are re-checked (a stat each), whatever the watcher
 * said: the bound on how long an edit can go unseen.
 */
export const CHECK_INTERVAL_MS = 250;

/**
 * An environment whose files vanished is removed only if they stay gone this long: deleting a
 * file and writing it again (some editors and scripts do) is an edit, not a removal.
 */
const REMOVAL_SETTLE_MS = 100;

/** The sources of a configuration: a path is a file source; inline environments, the inline source. */
const sourcesOf = (config: ServerConfig): readonly ConfigSource[] =>
  "path" in config ? [new FileSource(config.path)] : "sources" in config ? config.sources : [new InlineSource(config.environments)];

/**
 * Reads the configuration. Everything a load depends on is recorded in `inputs`; the key state
 * file before it is read. Each load reuses what the last one built from unchanged input (`memo`).
 */
function reader(sources: readonly ConfigSource[], keysFile: string) {
  const memo = new LoadMemo();
  return async (inputs?: InputSet, offThread = false): Promise<ConfigLoad> => {
    const load = await loadSources(sources, { inputs, offThread, memo });
    if (inputs) await recordFile(keysFile, inputs);
    return load;
  };
}

interface Following {
  sources: readonly ConfigSource[];
  watching: boolean;
  /** offThread: documents are parsed in the parse worker (see LoadOptions). */
  read(inputs?: InputSet, offThread?: boolean): Promise<ConfigLoad>;
  /** What the load already applied (at start-up) read. */
  initialInputs: InputSet;
  reloadContext: ReloadContext;
  metrics: Metrics;
}

/**
 * Reloads when a source says something changed. One reload at a time; edits that arrive
 * meanwhile are folded into one more; and every input is re-checked after each reload and
 * periodically, so no edit is left unloaded.
 */
async function followSources({ sources, watching, read, initialInputs, reloadContext, metrics }: Following): Promise<Reloader> {
  const { store, logger } = reloadContext;
  const reloader = createReloader({
    initial: watching ? initialInputs : undefined,
    checkMs: watching ? CHECK_INTERVAL_MS : 0,
    onError: (error) => logger.error(`reload failed: ${error.message}`),
    async run(inputs) {
      let load = await read(inputs, true);
      // A file read before it settled changed meanwhile: read again, waiting for it to settle first.
      if (load.unsettled) {
        inputs.clear();
        inputs.settleLater = false;
        load = await read(inputs, true);
      }
      // A removal counts once the files stayed gone for REMOVAL_SETTLE_MS (chokidar's `atomic` rule).
      for (let waited = 0; waited < REMOVAL_SETTLE_MS && removesEnvironments(load, store); waited += 10) {
        await sleep(10);
        inputs.clear();
        load = await read(inputs, true);
      }
      const changes = await applyLoad(load, reloadContext);
      const result = load.problems.size > 0 ? "invalid" : changes.length > 0 ? "changed" : "unchanged";
      metrics.count("flagserve_reloads_total", "Reloads by result (invalid: some environment kept its last good version)", { result });
    },
  });
  if (watching) {
    const listener = {
      changed: () => void reloader.reload().catch((error: Error) => logger.error(`reload failed: ${error.message}`)),
      error: (error: Error) => logger.error(error.message),
    };
    for (const source of sources) await source.watch(listener);
  }
  return reloader;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { logger, source } = options;
  const sources = sourcesOf(source);
  const watching = sources.length > 0 && options.watch !== false;
  const stateDir = options.stateDir ?? defaultStateDir(sources.map((s) => s.id));
  const read = reader(sources, stateFilePath(stateDir));

  // Checked before anything starts: a bad option is the caller's error, not a half-started server.
  const enrich = createEnricher({ values: options.contextValues, fromHeaders: options.contextFromHeaders });
  const initialFaults = validateFaultRules(options.faults ?? []);
  if (options.overridesFile !== undefined) {
    const { checkOverridesFile } = await import("../admin/overrides.js");
    await checkOverridesFile(
      options.overridesFile,
      sources.flatMap((s) => (s.kind === "files" ? [s.id] : [])),
    );
  }

  // What serves (HTTP, admin, streams) loads while the configuration is read: its modules' files
  // are read in the turns the load leaves between its steps. Awaited below; when the
  // configuration is refused it is not, and the handler keeps a failure from going unhandled.
  const serving = import("./runtime.js");
  serving.catch(() => undefined);
  const initialInputs = new InputSet();
  // A server whose text may change parses in the parse worker from its first load on: the
  // worker's code is then warm by the first edit (a fresh worker's first parses are its slowest).
  const offThread = watching && sources.some((source) => source.kind !== "inline");
  const initial = await readInitial((inputs) => read(inputs, offThread), initialInputs, sources, options.allowInvalid ?? false);
  const { createRuntime, listen, listenFlagdPort } = await serving;
  const runtime = await createRuntime(options, stateDir, initialFaults);
  const { store, faults, sessions, admin } = runtime;
  const reloadContext = changesContext(options, stateDir, runtime);
  admin.bind({
    apply: (load) => applyLoad(load, reloadContext, { partial: true, keepProblems: true }),
    revokeOldKeys: (env) => revokeOldKeys(reloadContext, env),
  });
  await applyLoad(initial, { ...reloadContext, logger: { ...logger, info() {} }, onChanges: undefined });

  const reloader = await followSources({ sources, watching, read, initialInputs, reloadContext, metrics: runtime.metrics });
  const stopping = { runtime, reloader, sources };
  let listening;
  try {
    listening = await listen(runtime, options, enrich);
  } catch (error) {
    await stopAll(stopping);
    throw error;
  }
  let flagd: FlagdListener | undefined;
  const { flagdPort } = options;
  if (flagdPort !== undefined) {
    try {
      flagd = await listenFlagdPort(runtime, { ...options, flagdPort }, listening.answerer);
    } catch (error) {
      await stopAll(stopping);
      await listening.close();
      throw error;
    }
  }
  // The token kept in the state directory goes only to a server that uses it: each such server
  // records itself beside it (admin/records.ts), and the commands reading the token (override,
  // session, keys revoke) send it only to a recorded server that proves it holds it.
  let record: string | undefined;
  if (admin.token !== undefined && admin.tokenInState) {
    record = await recordServer(stateDir, localUrl(listening.url)).catch((error: Error) => {
      logger.warn(
        `this server could not be recorded in ${stateDir} (${error.message}); flagserve override and session need --url and --admin-token`,
      );
      return undefined;
    });
  }

  let closing: Promise<void> | undefined;
  const listeningHttp = listening;
  return {
    url: listening.url,
    flagdPort: flagd?.port,
    store,
    keys: () => Object.fromEntries([...store.environments.values()].map((s) => [s.name, s.apiKey])),
    update: (env, config) => updateEnvironment(env, config, reloadContext),
    faults,
    sessions,
    overrides: admin.overrides,
    adminToken: admin.token,
    close: () =>
      (closing ??= (async () => {
        if (record !== undefined) await forgetServer(stateDir, record).catch(() => undefined);
        await stopAll(stopping);
        await Promise.all([listeningHttp.close(), flagd?.close()]);
      })()),
  };
}

/** The first load; with problems, the server does not start unless `allowInvalid` and something is left to serve. */
async function readInitial(
  read: (inputs?: InputSet) => Promise<ConfigLoad>,
  inputs: InputSet,
  sources: readonly ConfigSource[],
  allowInvalid: boolean,
): Promise<ConfigLoad> {
  const initial = await read(inputs).catch(async (error: unknown) => {
    await closeAll(sources);
    throw error;
  });
  const problems = allProblems(initial);
  if (problems.length > 0 && (!allowInvalid || initial.environments.size === 0)) {
    await closeAll(sources);
    throw new InvalidConfigError(problems);
  }
  return initial;
}

/** Where applied changes go: the store and the streams (applyLoad), then the notifier, the admin feed and the caller. */
function changesContext(options: ServerOptions, stateDir: string, { store, hub, notifier, admin, flagdStreams }: Runtime): ReloadContext {
  const onChanges = (changes: EnvironmentChange[]) => {
    notifier.onChanges(changes);
    admin.onChanges(changes);
    options.onChanges?.(changes);
  };
  const keyGraceSeconds = options.keyGraceSeconds ?? DEFAULT_KEY_GRACE_SECONDS;
  // A flagd stream opened with a revoked key ends: its selector no longer selects its environment.
  const keysRevoked = () => flagdStreams.replaced(store.environments);
  return { store, hub, logger: options.logger, stateDir, keyGraceSeconds, keysRevoked, onChanges, layer: admin.layer };
}

/** One environment replaced, through the same validation, diff and events as a file edit. */
async function updateEnvironment(env: string, config: unknown, reloadContext: ReloadContext): Promise<EnvironmentChange[]> {
  const load = await loadSources([new InlineSource({ [env]: config })]);
  const found = allProblems(load);
  if (found.length > 0) throw new InvalidConfigError(found);
  return applyLoad(load, reloadContext, { partial: true });
}

interface Stopping {
  runtime: Runtime;
  reloader: Reloader;
  sources: readonly ConfigSource[];
}

/** Everything but the listener, in order. */
async function stopAll({ runtime, reloader, sources }: Stopping): Promise<void> {
  runtime.hub.close(); // end the streams first, or closing the listener waits on them
  await runtime.admin.close(); // overrides being written are on disk before the process may exit
  await reloader.close();
  await closeAll(sources);
  await runtime.notifier.close(); // pending messages get a short deadline, then are dropped
}

const closeAll = async (sources: readonly ConfigSource[]): Promise<void> => {
  await Promise.all(sources.map((s) => s.close()));
};
