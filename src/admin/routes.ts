/**
 * The admin API under `/api/v1/admin/`: environments, overrides, save to file, playground, live
 * feed, and the test-fixture routes (fault rules, recorded sessions).
 */
import type { H3, H3Event } from "h3";
import { explainer } from "../engine/trace.js";
import { isEvaluationError } from "../engine/types.js";
import type { EnvironmentConfig, JsonPath } from "../model/types.js";
import { FailedAuthLimiter, limitSource } from "./auth-limit.js";
import { encodeEvent } from "../events/encode.js";
import { SseFrame } from "../events/frame.js";
import { createSseResponse } from "../events/sse.js";
import { JSON_CONTENT_TYPE } from "../evaluation/ofrep-bodies.js";
import { withHttpErrors } from "../http/errors.js";
import type { FaultInjector } from "../fixture/faults.js";
import { replyText, type OfrepAnswerer } from "../answers/ofrep-answers.js";
import type { SessionStore } from "../fixture/sessions.js";
import { clientIp } from "../http/events.js";
import type { Logger } from "../log/logger.js";
import type { FlagStore } from "../store/store.js";
import { describeEnvironments } from "./describe.js";
import { AdminError } from "./errors.js";
import { followSession, type AdminFeed } from "./feed.js";
import {
  checkedSessionId,
  FAULTS_PATH,
  registerFaultRoutes,
  registerSessionRoutes,
  SESSION_PATH,
  SESSIONS_PATH,
} from "./fixture-routes.js";
import { checkHostAndOrigin, checkToken, isAdminPath } from "./guard.js";
import { body, handle, param, rethrow } from "./handler.js";
import { ADMIN_API_PREFIX, PROOF_PATH } from "./paths.js";
import { adminProof, connectionEnd, isNonce } from "./proof.js";
import type { OverrideLayer } from "./overrides.js";
import { parsePatch, saveFlag } from "./save.js";
import type { OverrideService } from "./service.js";

export interface AdminRoutesOptions {
  store: FlagStore;
  layer: OverrideLayer;
  overrides: OverrideService;
  feed: AdminFeed;
  faults: FaultInjector;
  sessions: SessionStore;
  token: string;
  isAllowedHost: (name: string) => boolean;
  maxBodyBytes: number;
  logger: Logger;
  /** The OFREP evaluation rules (answers/ofrep-answers.ts), called directly by the playground. */
  answerer: OfrepAnswerer;
  /** Ends the grace of an environment's replaced keys; returns how many (changes/reload.ts). */
  revokeOldKeys: (env: string) => number;
}

/**
 * Host, origin and token checks for the page and the API, before any handler (the proof asks no
 * token: it is what proves the server holds it); failed token checks are limited per client
 * source (auth-limit.ts: all of loopback is one, IPv6 by /64).
 */
export function registerAdminGuard(app: H3, options: Pick<AdminRoutesOptions, "token" | "isAllowedHost">): void {
  const limiter = new FailedAuthLimiter();
  app.use((event) => {
    const path = event.url.pathname;
    if (!isAdminPath(path)) return;
    try {
      checkHostAndOrigin(event, options.isAllowedHost);
      if (path.startsWith(ADMIN_API_PREFIX) && path !== PROOF_PATH) checkLimitedToken(event, options.token, limiter);
    } catch (error) {
      rethrow(error);
    }
  });
}

function checkLimitedToken(event: H3Event, token: string, limiter: FailedAuthLimiter): void {
  const address = clientIp(event);
  const wait = limiter.retryAfter(address);
  if (wait !== undefined) {
    const source = limitSource(address);
    throw new AdminError(
      429,
      "TOO_MANY_REQUESTS",
      `too many failed admin authentications from ${source === address ? address : `${address} (counted with all of ${source})`}; try again in ${wait} s`,
      {},
      { "retry-after": String(wait) },
    );
  }
  try {
    checkToken(event, token);
  } catch (error) {
    // A guess is a token presented; a request without one (a page's plain fetch) guesses nothing.
    if (event.req.headers.has("authorization")) limiter.fail(address);
    throw error;
  }
}

const BASE = `${ADMIN_API_PREFIX}/environments/:env`;

export function registerAdminRoutes(app: H3, options: AdminRoutesOptions): void {
  const { store, layer, overrides } = options;
  app.get(
    `${ADMIN_API_PREFIX}/environments`,
    handle(() => describeEnvironments(store, layer)),
  );
  app.get(
    `${ADMIN_API_PREFIX}/overrides`,
    handle(() => ({ overrides: overrides.list() })),
  );
  registerOverrideRoutes(app, options);
  registerSaveRoute(app, options);
  registerPlaygroundRoute(app, options);
  registerFeedRoute(app, options);
  app.post(
    `${ADMIN_API_PREFIX}/keys/:env/revoke-old`,
    handle((event) => {
      const env = param(event, "env");
      snapshotOf(store, env);
      return { environment: env, revoked: options.revokeOldKeys(env) };
    }),
  );
  registerProofRoute(app, options);
  registerFaultRoutes(app, options);
  registerSessionRoutes(app, options);
  // Any other method on these paths: 405 naming the allowed ones (after the routes above, which win).
  for (const [path, allow] of Object.entries(ALLOWED_METHODS)) {
    app.all(
      path,
      handle((event) => {
        throw new AdminError(405, "METHOD_NOT_ALLOWED", `${event.req.method} is not allowed here; use ${allow}`, {}, { allow });
      }),
    );
  }
}

const ALLOWED_METHODS: Record<string, string> = {
  [`${ADMIN_API_PREFIX}/environments`]: "GET",
  [`${ADMIN_API_PREFIX}/overrides`]: "GET",
  [`${ADMIN_API_PREFIX}/events`]: "GET",
  [`${BASE}/overrides/:flag`]: "PUT, DELETE",
  [`${BASE}/overrides`]: "DELETE",
  [`${BASE}/flags/:flag`]: "PATCH",
  [`${BASE}/evaluate`]: "POST",
  [`${ADMIN_API_PREFIX}/keys/:env/revoke-old`]: "POST",
  [FAULTS_PATH]: "GET, PUT, DELETE",
  [SESSIONS_PATH]: "GET",
  [SESSION_PATH]: "GET, DELETE",
  [PROOF_PATH]: "GET",
};

/** The answer to a command's challenge (proof.ts), for the connection it arrived on. */
function registerProofRoute(app: H3, { token }: AdminRoutesOptions): void {
  app.get(
    PROOF_PATH,
    handle((event) => {
      const nonce = event.url.searchParams.get("nonce") ?? "";
      if (!isNonce(nonce)) throw new AdminError(400, "INVALID_REQUEST", "nonce must be 16 to 128 characters of A-Z, a-z, 0-9, '-' and '_'");
      const socket = event.runtime?.node?.req.socket;
      if (!socket) throw new AdminError(400, "INVALID_REQUEST", "a proof is given only for a request over a connection");
      return { proof: adminProof(token, nonce, connectionEnd(socket.localAddress, socket.localPort)) };
    }),
  );
}

function snapshotOf(store: FlagStore, env: string) {
  const snapshot = store.get(env);
  if (!snapshot) throw new AdminError(404, "ENVIRONMENT_NOT_FOUND", `no environment named '${env}'`);
  return snapshot;
}

function registerOverrideRoutes(app: H3, { overrides, maxBodyBytes }: AdminRoutesOptions): void {
  app.put(
    `${BASE}/overrides/:flag`,
    handle(async (event) => {
      const [env, flagKey] = [param(event, "env"), param(event, "flag")];
      const override = await overrides.set(env, flagKey, await body(event, maxBodyBytes));
      return { environment: env, flagKey, override };
    }),
  );
  app.delete(
    `${BASE}/overrides/:flag`,
    handle(async (event) => {
      const [env, flagKey] = [param(event, "env"), param(event, "flag")];
      const removed = await overrides.clear(env, flagKey);
      return { environment: env, flagKey, removed: removed.length > 0 };
    }),
  );
  app.delete(
    `${BASE}/overrides`,
    handle(async (event) => {
      const env = param(event, "env");
      return { environment: env, removed: await overrides.clear(env) };
    }),
  );
}

function registerSaveRoute(app: H3, { store, layer, maxBodyBytes, logger }: AdminRoutesOptions): void {
  app.patch(
    `${BASE}/flags/:flag`,
    handle(async (event) => {
      const [env, flagKey] = [param(event, "env"), param(event, "flag")];
      const patch = parsePatch(await body(event, maxBodyBytes));
      snapshotOf(store, env);
      const config = layer.base(env)?.config;
      const problem = config?.invalidFlags?.[flagKey];
      if (problem !== undefined)
        throw new AdminError(409, "CONFLICT", `flag ${flagKey} has a problem in its file (${problem}); fix the file first`, {
          key: flagKey,
        });
      const def = config && Object.hasOwn(config.flags, flagKey) ? config.flags[flagKey] : undefined;
      if (!config || !def) throw new AdminError(404, "FLAG_NOT_FOUND", `environment ${env} has no flag '${flagKey}'`, { key: flagKey });
      const saved = await saveFlag(config, flagKey, def, patch);
      logger.info(`${env}: ${flagKey} saved to ${saved.file} (${saved.changed.join(", ") || "no change"})`);
      return { environment: env, flagKey, ...saved };
    }),
  );
}

/**
 * The playground: the OFREP evaluate-all rules themselves, called with the environment's snapshot,
 * so the page shows exactly what a client gets (and never needs the key). Being no request to the
 * OFREP route, it is never touched by fault rules. Each flag whose targeting ran also says which
 * branches it took (`matched`), from a traced compile of the same configuration (engine/trace.ts),
 * made on the first question about it: the server's own evaluations are not traced.
 */
function registerPlaygroundRoute(app: H3, { store, maxBodyBytes, answerer }: AdminRoutesOptions): void {
  const explainers = new WeakMap<EnvironmentConfig, ReturnType<typeof explainer>>();
  app.post(
    `${BASE}/evaluate`,
    handle(async (event) => {
      const snapshot = snapshotOf(store, param(event, "env"));
      const context = await body(event, maxBodyBytes);
      // The headers a client of this environment would send (context enrichment may read them).
      const headers = new Headers({
        "x-api-key": snapshot.apiKey,
        "content-type": "application/json",
        host: event.req.headers.get("host") ?? "localhost",
      });
      const text = JSON.stringify({ context: context === undefined ? {} : context });
      const reply = await withHttpErrors(() => answerer.all(snapshot, text, headers, null));
      const replied = replyText(reply);
      if (reply.status !== 200 || replied === undefined)
        return new Response(replied, { status: reply.status, headers: { "content-type": JSON_CONTENT_TYPE } });
      let explain = explainers.get(snapshot.config);
      if (!explain) explainers.set(snapshot.config, (explain = explainer(snapshot.config)));
      const attributes = answerer.context(text, headers);
      const answer = JSON.parse(replied) as { flags: { key: string; matched?: MatchedBranch[] }[] };
      for (const flag of answer.flags) {
        const explained = explain(flag.key, attributes);
        if (!explained || isEvaluationError(explained.evaluation) || explained.branches.length === 0) continue;
        flag.matched = explained.branches.map(({ kind, label, path }) => ({ kind, label, path }));
      }
      return answer;
    }),
  );
}

/** A branch of a flag's targeting that an evaluation took (engine/trace.ts), for the playground. */
interface MatchedBranch {
  kind: string;
  label: string;
  path: JsonPath;
}

/**
 * The page's live feed: read with fetch() and the bearer header (EventSource cannot send one).
 * `?session=ID` adds that session's evaluations to it (one stream per page, whatever it shows).
 */
function registerFeedRoute(app: H3, { feed, sessions }: AdminRoutesOptions): void {
  app.get(
    `${ADMIN_API_PREFIX}/events`,
    handle((event) => {
      const asked = event.url.searchParams.get("session");
      const session = asked === null ? null : checkedSessionId(asked);
      return createSseResponse({
        contentType: "text/event-stream",
        keyDigest: "admin",
        ip: clientIp(event),
        maxBufferedBytes: 1024 * 1024,
        attach: (subscriber) => {
          // The state to start from, so a page that reconnects catches up without a reload.
          subscriber.send(new SseFrame(encodeEvent(feed.status())));
          const unsubscribe = feed.channel.subscribe(subscriber);
          if (session === null) return unsubscribe;
          const unfollow = followSession(sessions, session, (text) => subscriber.send(new SseFrame(text)));
          return () => {
            unsubscribe();
            unfollow();
          };
        },
      });
    }),
  );
}
