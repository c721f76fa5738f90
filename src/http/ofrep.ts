/** OFREP evaluation routes (DESIGN §5): request -> auth -> snapshot -> evaluate -> response. */
import { getRouterParam, noContent, type H3, type H3Event, type HTTPError } from "h3";
import type { Enricher } from "../fixture/enrich.js";
import type { FaultInjector } from "../fixture/faults.js";
import { isSessionId, SESSION_HEADER, type SessionLog, type SessionStore } from "../fixture/sessions.js";
import type { FlagStore } from "../store/store.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { authenticate } from "./auth.js";
import { parseJsonBody, readBodyText } from "./body.js";
import { createBulkAnswers } from "./bulk.js";
import { contextFromBody } from "../evaluation/context.js";
import { JSON_CONTENT_TYPE, apiError } from "./errors.js";
import type { EvaluationCounts } from "./evaluation-counts.js";
import { ifNoneMatchHits, sameConfigEtag } from "./etag.js";
import { createSingleAnswers } from "./single.js";

export interface OfrepOptions {
  store: FlagStore;
  maxBodyBytes: number;
  /** The path (and query) of the OFREP event stream advertised by evaluate-all, when there is one. */
  eventStreamPath?: (snapshot: EnvironmentSnapshot) => string;
  /** Bytes of evaluate-all answers kept per environment (see bulk.ts); 0 turns the cache off. */
  bulkCacheBytes?: number;
  /** The same for single-flag answers (see single.ts). */
  singleCacheBytes?: number;
  /** Per-flag counts for /metrics. */
  evaluations?: EvaluationCounts;
  /** Test-fixture hooks (src/fixture/); each one absent costs nothing. */
  enrich?: Enricher;
  faults?: FaultInjector;
  sessions?: SessionStore;
}

const SINGLE_PREFIX = "/ofrep/v1/evaluate/flags/";

/**
 * The flag key from the raw request path: clients send `encodeURIComponent(key)`, so `/` in a
 * key arrives as `%2F`, which the router leaves encoded while decoding the rest.
 */
function flagKeyOf(event: H3Event): string {
  const raw = new URL(event.req.url).pathname.slice(SINGLE_PREFIX.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return getRouterParam(event, "key") ?? raw;
  }
}

/** The session named by `X-Flagserve-Session`, when the request carries one. */
function sessionOf(event: H3Event, sessions: SessionStore | undefined): SessionLog | undefined {
  const id = sessions && event.req.headers.get(SESSION_HEADER);
  if (!id) return undefined;
  if (!isSessionId(id)) throw apiError(400, "INVALID_SESSION", `${SESSION_HEADER} must be 1 to 128 visible ASCII characters without spaces`);
  return sessions.open(id);
}

/** The request's context as received, for the recorder (parsed again: only requests with a session pay). */
const receivedContext = (text: string): unknown => (parseJsonBody(text) as { context?: unknown } | undefined)?.context ?? {};

export function registerOfrepRoutes(app: H3, options: OfrepOptions): void {
  const { store, maxBodyBytes, enrich, faults, sessions, evaluations } = options;
  const bulkAnswer = createBulkAnswers({ eventStreamPath: options.eventStreamPath, cacheBytes: options.bulkCacheBytes });
  const singleAnswer = createSingleAnswers(options.singleCacheBytes);

  app.post("/ofrep/v1/evaluate/flags", async (event) => {
    const snapshot = authenticate(event, store);
    // The router folds a trailing slash into this route; `flags/` is the single-flag route with an empty key.
    if (event.url.pathname.endsWith("/")) throw apiError(404, "FLAG_NOT_FOUND", "the flag key is empty", { key: "" });
    const fault = faults?.apply(event, "evaluate-all", snapshot.name);
    if (fault) await fault;
    const text = await readBodyText(event, maxBodyBytes);
    const session = sessionOf(event, sessions);
    const { headers } = event.req;
    // With headers copied into the context, the answer depends on them too: they join the cache key.
    const requestKey = enrich ? enrich.cacheKey(headers) + text : text;
    const context = () => (enrich ? enrich(contextFromBody(parseJsonBody(text)), headers) : contextFromBody(parseJsonBody(text)));
    const { body, etag, outcomes } = bulkAnswer(snapshot, requestKey, context);
    evaluations?.environment(snapshot.name).countAll(snapshot.flagKeys, outcomes);
    if (session) session.recordAll(snapshot.flagKeys, outcomes, receivedContext(text), new Date().toISOString());
    event.res.headers.set("etag", etag);
    event.res.headers.set("cache-control", "private, no-cache");

    // A re-fetch triggered by a change event names the configuration it was told about; when
    // that is not the current one the client must get a full answer, never a 304 (OFREP ADR-0008).
    const flagConfigEtag = event.url.searchParams.get("flagConfigEtag");
    const staleTrigger = flagConfigEtag !== null && !sameConfigEtag(flagConfigEtag, snapshot.configEtag);
    if (!staleTrigger && ifNoneMatchHits(event.req.headers.get("if-none-match"), etag)) return noContent(304);
    // Text, not a Response (which h3 would wrap in a stream) nor bytes (for which h3 builds and
    // merges a header set of its own): the text goes out as is, with its Content-Length.
    event.res.headers.set("content-type", JSON_CONTENT_TYPE);
    return body;
  });

  app.post("/ofrep/v1/evaluate/flags/:key", async (event) => {
    const key = flagKeyOf(event);
    const snapshot = authenticate(event, store);
    const fault = faults?.apply(event, "evaluate", snapshot.name, key);
    if (fault) await fault;
    const text = await readBodyText(event, maxBodyBytes);
    const session = sessionOf(event, sessions);
    const counts = evaluations?.environment(snapshot.name);
    const { headers } = event.req;
    let answer;
    try {
      answer = enrich
        ? singleAnswer(snapshot, key, text, Date.now(), { enrich: (attributes) => enrich(attributes, headers), cacheKey: enrich.cacheKey(headers) })
        : singleAnswer(snapshot, key, text);
    } catch (error) {
      if ((error as HTTPError).status === 404) {
        counts?.countUnknown();
        session?.record(key, { errorCode: "FLAG_NOT_FOUND" }, receivedContext(text), new Date().toISOString());
      }
      throw error;
    }
    const { status, json, result } = answer;
    counts?.count(key, result);
    session?.record(key, result, receivedContext(text), new Date().toISOString());
    if (status !== 200) event.res.status = status;
    event.res.headers.set("content-type", JSON_CONTENT_TYPE);
    return json;
  });

  for (const route of ["/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/:key"]) {
    app.all(route, (event) => {
      throw apiError(405, "METHOD_NOT_ALLOWED", `${event.req.method} is not allowed here; use POST`, {
        headers: { allow: "POST, OPTIONS" },
      });
    });
  }
}
