/** The h3 application: CORS, OFREP routes, probes, and JSON errors for everything else. */
import { H3, handleCors, type H3Event } from "h3";
import type { EventHub } from "../events/hub.js";
import type { Enricher } from "../fixture/enrich.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { SessionStore } from "../fixture/sessions.js";
import type { Logger } from "../log/logger.js";
import type { FlagStore } from "../store/store.js";
import { DEFAULT_MAX_BODY_BYTES } from "./body.js";
import { json } from "./errors.js";
import { EvaluationCounts } from "../answers/evaluation-counts.js";
import { createEventStreams, EVENTS_PATH, ofrepStreamPath, registerEventRoutes, type EventStreams } from "./events.js";
import { registerHealthRoutes } from "./health.js";
import { formatSample } from "../model/prometheus.js";
import { Metrics } from "./metrics.js";
import { createFastPath, type NodeFastPath } from "./fast-path.js";
import { ANY_ORIGIN_CORS_HEADERS, countResponse, errorResponse } from "./front-door.js";
import { MANIFEST_ROUTE, registerManifestRoutes } from "./manifest.js";
import { registerOfrepRoutes } from "./ofrep.js";
import { createOfrepAnswerer, type OfrepAnswerer } from "../answers/ofrep-answers.js";

export interface AppOptions {
  store: FlagStore;
  logger: Logger;
  metrics?: Metrics;
  /** Allowed CORS origin(s); "*" (the default) allows any. */
  corsOrigin?: string | string[];
  maxBodyBytes?: number;
  /** With a hub, the SSE routes are served and evaluate-all advertises the OFREP stream. */
  hub?: EventHub;
  clientIpHeader?: string;
  maxStreamsPerIp?: number;
  /** A stream whose unsent data exceeds this is cut off (default 1 MiB). */
  maxBufferedBytes?: number;
  /** Test-fixture hooks: context enrichment, fault injection, the evaluation recorder. */
  enrich?: Enricher;
  faults?: FaultInjector;
  sessions?: SessionStore;
  /** The admin API and dashboard page (src/admin): their own guard, never CORS (not a CORS route). */
  admin?: { register(app: H3, answerer: OfrepAnswerer): void };
  /** Host names that see the details of /readyz and /metrics (default: loopback; see hosts.ts). */
  isKnownHost?: (name: string) => boolean;
  /**
   * false: every request goes through h3, never the node:http fast path (fast-path.ts). The
   * answers are the same either way; the parity tests compare the two.
   */
  fastPath?: boolean;
}

/**
 * The routes browsers call from other origins: OFREP, the event streams and the flag manifest
 * (the OpenFeature CLI's API, for tools that run in a browser). They carry no
 * credentials (the key is a header or a token in the URL, never a cookie), so a preflight may
 * allow whatever request headers it asks for: the Flipswitch SDKs send `X-Flipswitch-*`,
 * `Cache-Control` and `Last-Event-ID`, the OFREP providers `X-Service-*`, `If-None-Match`;
 * test suites `X-Flagserve-Session`.
 * Probes and metrics get no CORS headers at all: no web page needs to read them.
 */
const isCorsRoute = (path: string): boolean =>
  path.startsWith("/ofrep/") || path === EVENTS_PATH || path === MANIFEST_ROUTE || path.startsWith(`${MANIFEST_ROUTE}/`);

/** What h3's handleCors sets on a simple request when any origin is allowed (on both header sets, as it does). */
function setSimpleCorsHeaders(event: H3Event): void {
  for (const headers of [event.res.headers, event.res.errHeaders]) {
    for (const [name, value] of ANY_ORIGIN_CORS_HEADERS) headers.set(name, value);
  }
}

/** `flagserve_sse_streams_open{environment, stream}`: open streams per environment and kind. */
function streamLines(hub: EventHub): string[] {
  const name = "flagserve_sse_streams_open";
  const counts = hub.streamCounts();
  if (counts.length === 0) return [];
  return [
    `# HELP ${name} Open event streams by environment and stream (events: /api/v1/flags/events, ofrep: /ofrep/v1/events)`,
    `# TYPE ${name} gauge`,
    ...counts.map(({ env, kind, count }) => formatSample(name, { environment: env, stream: kind }, count)),
  ];
}

/** The h3 app with flagserve's response counting and JSON error answers. */
function createH3(metrics: Metrics, logger: Logger): H3 {
  return new H3({
    onResponse(response, event) {
      countResponse(metrics, event.context.matchedRoute?.route ?? "unmatched", response.status);
    },
    onError(error, event) {
      const { status, body, headers } = errorResponse(error, { metrics, logger, method: event.req.method, path: event.url.pathname });
      event.res.status = status;
      for (const name in headers) event.res.headers.set(name, headers[name]!);
      return json(event, body);
    },
  });
}

/** Counts each request's client, and answers CORS on the public routes (never on admin ones). */
function useCors(app: H3, metrics: Metrics, origin: string | string[]): void {
  const cors: Parameters<typeof handleCors>[1] = {
    origin: origin === "*" ? "*" : Array.isArray(origin) ? origin : [origin],
    methods: ["GET", "POST", "OPTIONS"],
    allowHeaders: "*", // reflects Access-Control-Request-Headers, with Vary
    exposeHeaders: ["etag"],
    maxAge: "600",
  };
  app.use((event) => {
    metrics.countClient(event.req.headers);
    if (!isCorsRoute(event.url.pathname)) return;
    // Any origin and no preflight, the common case: the two fixed headers handleCors would set.
    if (origin === "*" && event.req.method !== "OPTIONS") return setSimpleCorsHeaders(event);
    const preflight = handleCors(event, cors);
    if (preflight !== false) return preflight;
  });
}

export function createApp(options: AppOptions): { app: H3; fastPath?: NodeFastPath; answerer: OfrepAnswerer } {
  const { store, logger } = options;
  const metrics = options.metrics ?? new Metrics();
  const origin = options.corsOrigin ?? "*";

  const app = createH3(metrics, logger);
  useCors(app, metrics, origin);

  const { hub, enrich, faults, sessions } = options;
  const evaluations = new EvaluationCounts();
  metrics.collect(() => evaluations.render());
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const answerer = createOfrepAnswerer({ eventStreamPath: hub ? ofrepStreamPath : undefined, evaluations, enrich, sessions });
  registerOfrepRoutes(app, { store, answerer, maxBodyBytes, faults });
  registerManifestRoutes(app, { store, metrics, logger });
  let streams: EventStreams | undefined;
  if (hub) {
    const { clientIpHeader, maxStreamsPerIp, maxBufferedBytes } = options;
    streams = createEventStreams({ store, hub, logger, clientIpHeader, maxStreamsPerIp, maxBufferedBytes });
    registerEventRoutes(app, streams, faults);
    metrics.gauge("flagserve_sse_streams", "Open event streams", () => hub.streamCount);
    metrics.collect(() => streamLines(hub));
  }
  // Any origin allowed: plain evaluations and stream openings skip h3 (fast-path.ts); a configured origin keeps h3's CORS rules.
  const fastPath =
    origin === "*" && options.fastPath !== false
      ? createFastPath({ store, answerer, streams, metrics, logger, maxBodyBytes, faults })
      : undefined;
  registerHealthRoutes(app, store, metrics, options.isKnownHost);
  options.admin?.register(app, answerer);
  metrics.gauge("flagserve_environments", "Environments being served", () => store.environments.size);

  return { app, fastPath, answerer };
}
