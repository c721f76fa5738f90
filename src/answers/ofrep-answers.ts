/**
 * The OFREP evaluation routes once the request is read, as plain data: the environment, the body
 * text and the request's headers in; status, headers and body out. Both ways in share it, the h3
 * routes (http/ofrep.ts) and the Node fast path (http/fast-path.ts), so every rule (sessions, context
 * enrichment, caching, counting, ETag revalidation) is written once; each of them only reads the
 * request and writes the answer.
 */
import type { Enricher } from "../fixture/enrich.js";
import { isSessionId, SESSION_HEADER, type SessionLog, type SessionStore } from "../fixture/sessions.js";
import { contextFromBody, parseJsonBody, type RequestHeaders } from "../evaluation/context.js";
import { ApiError, apiError } from "../evaluation/problem.js";
import type { Evaluation } from "../engine/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { createBulkAnswers, type BulkAnswer } from "./bulk.js";
import { JSON_CONTENT_TYPE } from "../evaluation/ofrep-bodies.js";
import type { EvaluationCounts } from "./evaluation-counts.js";
import { ifNoneMatchHits, sameConfigEtag } from "./etag.js";
import { createSingleAnswers, type SingleAnswer } from "./single.js";

/** An answer to send: headers beyond CORS and Content-Length, in name order; no body for a 304. */
export interface OfrepReply {
  status: number;
  headers: Record<string, string>;
  body?: string;
  /** The body as bytes instead (evaluate-all), or as well (a memoized single-flag reply): http/fast-path.ts sends these. */
  bytes?: Buffer;
  /** Memoized with its answer and sent again as this same object: what a sender derives from it may be memoized too. */
  memoized?: boolean;
}

/** What an answerer adds to plain evaluation: each option absent costs nothing. */
export interface OfrepAnswererOptions {
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
  sessions?: SessionStore;
}

/**
 * The two OFREP evaluation routes once the environment is known and the body read, for any
 * transport: each returns the reply to send, or throws the ApiError (evaluation/problem.ts) whose
 * status and body the transport sends (http/front-door.ts's errorResponse does it for HTTP).
 */
export interface OfrepAnswerer {
  /** `POST /ofrep/v1/evaluate/flags`; `flagConfigEtag` is the query parameter of an event-triggered re-fetch. */
  all(snapshot: EnvironmentSnapshot, text: string, headers: RequestHeaders, flagConfigEtag: string | null): OfrepReply;
  /** `POST /ofrep/v1/evaluate/flags/{key}`; throws the 400 and 404 ApiErrors. */
  flag(snapshot: EnvironmentSnapshot, key: string, text: string, headers: RequestHeaders): OfrepReply;
  /**
   * `flag` before it becomes a reply: the evaluation itself, counted, recorded and cached the same
   * way, for transports that send it in a shape of their own (src/flagd/). Same errors.
   */
  evaluateFlag(snapshot: EnvironmentSnapshot, key: string, text: string, headers: RequestHeaders): Evaluation;
  /** `all` before it becomes a reply: every flag's evaluation, in `snapshot.flagKeys` order. */
  evaluateAll(snapshot: EnvironmentSnapshot, text: string, headers: RequestHeaders): readonly Evaluation[];
  /** The context a request's body and headers are evaluated with (enriched, as above); throws the body's 400. */
  context(text: string, headers: RequestHeaders): Record<string, unknown>;
}

/** The session named by `X-Flagserve-Session`, when the request carries one. */
function sessionOf(headers: RequestHeaders, sessions: SessionStore | undefined): SessionLog | undefined {
  const id = sessions && headers.get(SESSION_HEADER);
  if (!id) return undefined;
  if (!isSessionId(id))
    throw apiError(400, "INVALID_SESSION", `${SESSION_HEADER} must be 1 to 128 visible ASCII characters without spaces`);
  return sessions.open(id);
}

/** The request's context as received, for the recorder (parsed again: only requests with a session pay). */
const receivedContext = (text: string): unknown => (parseJsonBody(text) as { context?: unknown } | undefined)?.context ?? {};

const now = () => new Date().toISOString();

const CACHE_CONTROL = "private, no-cache";

/**
 * Replies memoized per answer, so an answer served again from a cache is sent again as the very
 * same reply object (the fast path memoizes its Node header list by that object). Memoized only
 * once the answer is served again from its cache (bulk.ts) or asked for a second time: most first
 * answers are never asked for again.
 */
class ReplyMemo<A extends object> {
  #replies = new WeakMap<A, OfrepReply | null>();
  /** Makes the reply to an answer (`memoizing`: it will be memoized); reads nothing else, so it is made once. */
  constructor(private readonly make: (answer: A, memoizing: boolean) => OfrepReply) {}

  /** The reply memoized for `answer`, else a new one, memoized when `memoize` (or from the second time on). */
  reply(answer: A, memoize = false): OfrepReply {
    const memoized = this.#replies.get(answer);
    if (memoized) return memoized;
    const memoizing = memoize || memoized === null;
    const reply = this.make(answer, memoizing);
    if (memoizing) reply.memoized = true;
    this.#replies.set(answer, memoizing ? reply : null);
    return reply;
  }
}

const notModifiedReply = ({ etag }: BulkAnswer): OfrepReply => ({ status: 304, headers: { "cache-control": CACHE_CONTROL, etag } });
const fullReply = ({ etag, bytes }: BulkAnswer): OfrepReply => ({
  status: 200,
  headers: { "cache-control": CACHE_CONTROL, "content-type": JSON_CONTENT_TYPE, etag },
  bytes,
});
const singleReply = ({ status, json }: SingleAnswer, memoizing: boolean): OfrepReply => ({
  status,
  headers: { "content-type": JSON_CONTENT_TYPE },
  body: json,
  bytes: memoizing ? Buffer.from(json) : undefined,
});

/** The context of a request body, read the same way every time (see fixture/enrich.ts for more). */
const contextOf = (text: string): Record<string, unknown> => contextFromBody(parseJsonBody(text));

/**
 * An answerer with its own caches (evaluate-all and single-flag answers, per snapshot) and
 * counts: make one per server and share it between its transports, so a cached answer serves them all.
 */
export function createOfrepAnswerer(options: OfrepAnswererOptions): OfrepAnswerer {
  const { enrich, sessions, evaluations } = options;
  const bulkAnswer = createBulkAnswers({ eventStreamPath: options.eventStreamPath, cacheBytes: options.bulkCacheBytes });
  const singleAnswer = createSingleAnswers(options.singleCacheBytes);
  const notModified = new ReplyMemo(notModifiedReply);
  const fullAnswers = new ReplyMemo(fullReply);
  const singleReplies = new ReplyMemo(singleReply);

  function allAnswer(snapshot: EnvironmentSnapshot, text: string, headers: RequestHeaders): BulkAnswer {
    const session = sessionOf(headers, sessions);
    // With headers copied into the context, the answer depends on them too: they scope the cache.
    const scope = enrich ? enrich.cacheKey(headers) : "";
    const answer = bulkAnswer(snapshot, scope, text, enrich ? (body) => enrich(contextOf(body), headers) : contextOf);
    evaluations?.environment(snapshot.name).countAll(snapshot.flagKeys, answer.outcomes, answer.repeated);
    if (session) session.recordAll(snapshot.flagKeys, answer.outcomes, receivedContext(text), now());
    return answer;
  }

  function all(snapshot: EnvironmentSnapshot, text: string, headers: RequestHeaders, flagConfigEtag: string | null): OfrepReply {
    const answer = allAnswer(snapshot, text, headers);
    const { etag } = answer;
    // A re-fetch triggered by a change event names the configuration it was told about; when
    // that is not the current one the client must get a full answer, never a 304 (OFREP ADR-0008).
    const staleTrigger = flagConfigEtag !== null && !sameConfigEtag(flagConfigEtag, snapshot.configEtag);
    if (!staleTrigger && ifNoneMatchHits(headers.get("if-none-match"), etag)) {
      return notModified.reply(answer);
    }
    return answer.repeated ? fullAnswers.reply(answer, true) : fullReply(answer);
  }

  function flagAnswer(snapshot: EnvironmentSnapshot, key: string, text: string, headers: RequestHeaders): SingleAnswer {
    const session = sessionOf(headers, sessions);
    const counts = evaluations?.environment(snapshot.name);
    let answer: SingleAnswer;
    try {
      answer = enrich
        ? singleAnswer(snapshot, key, text, undefined, {
            enrich: (attributes) => enrich(attributes, headers),
            cacheKey: enrich.cacheKey(headers),
          })
        : singleAnswer(snapshot, key, text);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        counts?.countUnknown();
        session?.record(key, { errorCode: "FLAG_NOT_FOUND" }, receivedContext(text), now());
      }
      throw error;
    }
    counts?.count(key, answer.result);
    session?.record(key, answer.result, receivedContext(text), now());
    return answer;
  }

  return {
    all,
    flag: (snapshot, key, text, headers) => singleReplies.reply(flagAnswer(snapshot, key, text, headers)),
    evaluateFlag: (snapshot, key, text, headers) => flagAnswer(snapshot, key, text, headers).result,
    evaluateAll: (snapshot, text, headers) => allAnswer(snapshot, text, headers).outcomes,
    context: (text, headers) => (enrich ? enrich(contextOf(text), headers) : contextOf(text)),
  };
}

/** A reply's body as text, for senders that take text (the h3 routes, the playground). */
export const replyText = (reply: OfrepReply): string | undefined => reply.body ?? reply.bytes?.toString("utf8");

/** An error as a reply: its status, the JSON body and its headers (all in name order, as h3 sends them). */
export function errorReply(status: number, body: object, headers: Readonly<Record<string, string>> = {}): OfrepReply {
  const all: Record<string, string> = {};
  for (const name of [...Object.keys(headers), "content-type"].sort())
    all[name] = name === "content-type" ? JSON_CONTENT_TYPE : headers[name]!;
  return { status, headers: all, body: JSON.stringify(body) };
}
