/**
 * What serves and what listens to changes: the store, the streams' hub, metrics, fixtures, the
 * notifier, the admin API, and the HTTP app listening over them. A module of its own so that
 * server.ts loads it (h3, listhen, the admin API...) while the configuration is being read.
 */
import { createAdmin, type Admin } from "../admin/index.js";
import { EventHub } from "../events/hub.js";
import { FlagdStreams } from "../flagd/streams.js";
import type { Enricher } from "../fixture/enrich.js";
import type { FaultRule } from "../fixture/fault-rules.js";
import { FaultInjector } from "../fixture/faults.js";
import { SessionStore } from "../fixture/sessions.js";
import { createApp } from "../http/app.js";
import { allowedHosts } from "../http/hosts.js";
import { DEFAULT_MAX_BODY_BYTES } from "../http/body.js";
import { listenApp } from "../http/listen.js";
import { Metrics } from "../http/metrics.js";
import type { OfrepAnswerer } from "../answers/ofrep-answers.js";
import { createNotifier, type Notifier } from "../notify/notifier.js";
import { FlagStore } from "../store/store.js";
import type { ServerOptions } from "./options.js";

/** What serves and what listens to changes, before any configuration is applied. */
export interface Runtime {
  store: FlagStore;
  metrics: Metrics;
  hub: EventHub;
  faults: FaultInjector;
  sessions: SessionStore;
  notifier: Notifier;
  admin: Admin;
  /** The flagd port's open streams (empty without `--flagd-port`). */
  flagdStreams: FlagdStreams;
}

export async function createRuntime(options: ServerOptions, stateDir: string, initialFaults: FaultRule[]): Promise<Runtime> {
  const { logger } = options;
  const store = new FlagStore();
  const metrics = new Metrics();
  const hub = new EventHub({ eventSet: options.eventSet, heartbeatSeconds: options.heartbeatSeconds });
  const flagdStreams = new FlagdStreams();
  store.onReplace(() => flagdStreams.replaced(store.environments));
  const faults = new FaultInjector({
    dropStreams: (route, env, pick) =>
      route === "flagd-events" || route === "flagd-sync"
        ? flagdStreams.drop(route, env, pick)
        : hub.dropStreams(route === "ofrep-events" ? "ofrep" : "events", env, pick),
    onInjected: (route, effect) =>
      metrics.count("flagserve_faults_injected_total", "Injected faults by route and effect", { route, effect }),
  });
  faults.set(initialFaults);
  const sessions = new SessionStore();
  // Notifications are queued and sent detached, so they never hold up a reload or its events.
  const notifier = createNotifier({ logger });
  const admin = await createAdmin({
    store,
    logger,
    stateDir,
    enabled: options.admin !== false,
    token: options.adminToken,
    overridesFile: options.overridesFile,
    listenHost: options.host,
    hosts: options.adminHosts,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    metrics,
    faults,
    sessions,
  });
  return { store, metrics, hub, faults, sessions, notifier, admin, flagdStreams };
}

/** The HTTP app over the runtime, listening as the options say. */
export async function listen(
  { store, hub, metrics, faults, sessions, admin }: Runtime,
  options: ServerOptions,
  enrich: Enricher | undefined,
) {
  const { app, fastPath, answerer } = createApp({
    store,
    hub,
    logger: options.logger,
    metrics,
    corsOrigin: options.corsOrigin,
    maxBodyBytes: options.maxBodyBytes,
    clientIpHeader: options.clientIpHeader,
    maxStreamsPerIp: options.maxStreamsPerIp,
    enrich,
    faults,
    sessions,
    admin,
    isKnownHost: allowedHosts(options.host, options.adminHosts),
    fastPath: options.fastPath,
  });
  const listening = await listenApp(app, {
    port: options.port,
    host: options.host,
    https: options.https,
    public: options.public,
    fastPath,
  });
  return { ...listening, answerer };
}

/**
 * The flagd port (`--flagd-port`) over the same runtime and evaluation answers as the HTTP app,
 * with its CORS origins and known hosts. Connect is loaded here, only when the port is asked for.
 */
export async function listenFlagdPort(
  { store, metrics, faults, flagdStreams }: Runtime,
  options: ServerOptions & { flagdPort: number },
  answerer: OfrepAnswerer,
) {
  const { listenFlagd } = await import("../flagd/server.js");
  return listenFlagd({
    port: options.flagdPort,
    host: options.host,
    store,
    answerer,
    streams: flagdStreams,
    logger: options.logger,
    selectorByName: options.flagdSelectorByName,
    faults,
    metrics,
    staticContext: options.contextValues,
    maxMessageBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxStreamsPerIp: options.maxStreamsPerIp,
    corsOrigin: options.corsOrigin,
    isKnownHost: allowedHosts(options.host, options.adminHosts),
  });
}
