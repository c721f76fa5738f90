/**
 * The OFREP evaluation routes and the event streams' openings straight on node:http, in front of
 * h3: a routed h3 request costs about twice a bare Node one, most of an evaluation served from the
 * answer cache, and a quarter more to open an event stream. It answers only the plain case, `POST` to
 * `/ofrep/v1/evaluate/flags` or `.../flags/{key}` and `GET` of `/api/v1/flags/events` or
 * `/ofrep/v1/events`, with any CORS origin allowed and no fault rules active, through the very
 * rules the h3 routes apply (auth.ts, body.ts, answers/ofrep-answers.ts, events.ts) and the facts
 * both state once (front-door.ts); everything else (preflights, other methods, configured origins,
 * injected faults, unusual paths or Host headers) goes on to h3 untouched. `fastPath: false` in
 * the server options turns it off (docs/architecture.md, "The request path").
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StreamKind } from "../events/hub.js";
import { startNodeSse, type SseStreamOptions } from "../events/sse.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { Logger } from "../log/logger.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import type { FlagStore } from "../store/store.js";
import type { RequestHeaders } from "../evaluation/context.js";
import { environmentFor } from "./auth.js";
import { readNodeBodyWith } from "./body.js";
import { EVENTS_PATH, OFREP_STREAM_PATH, type EventStreams, type StreamRequest } from "./events.js";
import { mayIdentifyClient, type Metrics } from "./metrics.js";
import { ALL_ROUTE, ANY_ORIGIN_CORS_HEADERS, errorResponse, FLAG_PATH_PREFIX, FLAG_ROUTE, responseCounter } from "./front-door.js";
import { errorReply, type OfrepAnswerer, type OfrepReply } from "../answers/ofrep-answers.js";
import { decodedSegment } from "./path.js";

/** Answers the request and returns true, or returns false having touched nothing. */
export type NodeFastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface FastPathOptions {
  store: FlagStore;
  answerer: OfrepAnswerer;
  /** With event streams, their openings too. */
  streams?: EventStreams;
  metrics: Metrics;
  logger: Logger;
  maxBodyBytes: number;
  faults?: FaultInjector;
}

/**
 * When the fast path answers and when it leaves a request to h3 is its own rule: the two
 * patterns below are the requests h3's router and `new URL()` read exactly as this file does.
 * A key segment the h3 router reads the same way: unreserved, sub-delims, `:@` and escapes.
 */
const PLAIN_SEGMENT = /^[\w\-.~!$&'()*+,;=:@%]+$/;
/** A Host header `new URL()` (h3) cannot refuse. */
const PLAIN_HOST = /^[\w\-.]+(?::\d{1,5})?$|^\[[\da-fA-F:.]+\](?::\d{1,5})?$/;
const CORS_HEADERS = ANY_ORIGIN_CORS_HEADERS.flat();

type Route = typeof ALL_ROUTE | typeof FLAG_ROUTE | typeof EVENTS_PATH | typeof OFREP_STREAM_PATH;

export interface Target {
  readonly route: Route;
  readonly method: "POST" | "GET";
  /** The decoded flag key on the single-flag route. */
  readonly key: string | undefined;
  /** On evaluate-all, the `flagConfigEtag` query parameter. */
  readonly flagConfigEtag: string | null;
  /** On a stream's route: which stream, and the query it is asked with. */
  readonly stream: StreamKind | undefined;
  readonly query: URLSearchParams | undefined;
}

/** A target with every field set, in one order: one object shape for every route, read without a type check per field. */
const routeTarget = (
  route: Route,
  { key, flagConfigEtag = null, stream, query }: Partial<Pick<Target, "key" | "flagConfigEtag" | "stream" | "query">>,
): Target => ({
  route,
  method: stream === undefined ? "POST" : "GET",
  key,
  flagConfigEtag,
  stream,
  query,
});

/** Request targets seen, with their route (null: h3's): clients repeat a handful of them. */
const MAX_MEMOIZED_TARGETS = 1024;

/**
 * `targetOf`, memoized per request target while fewer than MAX_MEMOIZED_TARGETS are held (then
 * forgotten all at once: anyone can send new ones). Targets are read-only once made.
 */
function memoizedTargets(): (url: string) => Target | undefined {
  const memo = new Map<string, Target | null>();
  // A client repeats its last request target: comparing with it costs less than hashing it.
  let lastUrl = "";
  let lastTarget: Target | null = null;
  return (url) => {
    if (url === lastUrl) return lastTarget ?? undefined;
    let target = memo.get(url);
    if (target === undefined) {
      if (memo.size >= MAX_MEMOIZED_TARGETS) memo.clear();
      memo.set(url, (target = targetOf(url) ?? null));
    }
    lastUrl = url;
    lastTarget = target;
    return target ?? undefined;
  };
}

/** The route of a plain request target, or undefined for anything h3 should look at. */
export function targetOf(url: string): Target | undefined {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? undefined : new URLSearchParams(url.slice(q + 1));
  if (path === ALL_ROUTE) return routeTarget(ALL_ROUTE, { flagConfigEtag: query?.get("flagConfigEtag") ?? null });
  if (path === EVENTS_PATH) return routeTarget(EVENTS_PATH, { stream: "events", query });
  if (path === OFREP_STREAM_PATH) return routeTarget(OFREP_STREAM_PATH, { stream: "ofrep", query });
  if (!path.startsWith(FLAG_PATH_PREFIX)) return undefined;
  const raw = path.slice(FLAG_PATH_PREFIX.length);
  if (!PLAIN_SEGMENT.test(raw)) return undefined;
  const key = decodedSegment(raw);
  // Dot segments (`..`, `%2e`) are resolved away by URL parsing: not this route.
  if (key === undefined || key === "." || key === "..") return undefined;
  return routeTarget(FLAG_ROUTE, { key });
}

/** Every value of a header in `rawHeaders` (`name` in lower case), joined with ", ". */
function joinedRaw(raw: string[], name: string): string | null {
  let value: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length === name.length && (field === name || field.toLowerCase() === name))
      value = value === null ? raw[i + 1]! : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/**
 * A Node request's headers as the shared rules read them (auth.ts), from Node's header object
 * (Node builds it for every request), with h3's value for Authorization: Node keeps the first of
 * a repeated one, where h3 (srvx's Headers) joins them, so two keys are no key on either path.
 */
class NodeRequestHeaders implements RequestHeaders {
  constructor(private readonly req: IncomingMessage) {}
  /** `name` in lower case. */
  get(name: string): string | null {
    const value = this.req.headers[name];
    if (value === undefined) return null;
    if (Array.isArray(value)) return value.join(", ");
    return name === "authorization" ? joinedRaw(this.req.rawHeaders, name) : value;
  }
}

/** A reply's Node header list: CORS, its own headers, Content-Length. */
function headOf(reply: OfrepReply): string[] {
  const head = CORS_HEADERS.slice();
  for (const name in reply.headers) head.push(name, reply.headers[name]!);
  const body = reply.bytes ?? reply.body;
  if (body !== undefined) head.push("content-length", String(typeof body === "string" ? Buffer.byteLength(body) : body.length));
  return head;
}

/** Header lists of the replies that are sent again and again (memoized with their answers, answers/ofrep-answers.ts). */
const heads = new WeakMap<OfrepReply, string[]>();

function send(res: ServerResponse, reply: OfrepReply): void {
  let head = reply.memoized ? heads.get(reply) : undefined;
  if (head === undefined) {
    head = headOf(reply);
    if (reply.memoized) heads.set(reply, head);
  }
  res.writeHead(reply.status, head);
  res.end(reply.bytes ?? reply.body);
}

/** The route of a request the fast path answers, else undefined (h3's): see the module comment. */
function plainRequests(faults: FaultInjector | undefined, streams: EventStreams | undefined): (req: IncomingMessage) => Target | undefined {
  const targetFor = memoizedTargets();
  let plainHost = "";
  return (req) => {
    if (!req.url) return undefined;
    const target = targetFor(req.url);
    if (!target || req.method !== target.method || (target.stream && !streams) || faults?.active) return undefined;
    // The Host header changes seldom on a server: the last one that passed is not tested again.
    const host = req.headers.host ?? "";
    if (host !== plainHost) {
      if (!PLAIN_HOST.test(host)) return undefined;
      plainHost = host;
    }
    return target;
  };
}

export function createFastPath(options: FastPathOptions): NodeFastPath {
  const { store, answerer, streams, metrics, logger, maxBodyBytes, faults } = options;
  const plainTarget = plainRequests(faults, streams);
  const counted = Object.fromEntries(
    [ALL_ROUTE, FLAG_ROUTE, EVENTS_PATH, OFREP_STREAM_PATH].map((route) => [route, responseCounter(metrics, route)]),
  ) as Record<Route, (status: number) => void>;

  /** An error as h3's error hook answers it (front-door.ts). */
  const failed = (req: IncomingMessage, error: unknown): OfrepReply => {
    const { status, body, headers } = errorResponse(error, { metrics, logger, method: req.method, path: req.url?.split("?")[0] ?? "" });
    return errorReply(status, body, headers);
  };

  const respond = (res: ServerResponse, target: Target, reply: OfrepReply) => {
    counted[target.route](reply.status);
    send(res, reply);
  };

  /** The reply to a request whose body was read: its answer, or the answer to what it threw. */
  function replyTo(req: IncomingMessage, target: Target, snapshot: EnvironmentSnapshot, headers: RequestHeaders, text: string): OfrepReply {
    try {
      return target.key === undefined
        ? answerer.all(snapshot, text, headers, target.flagConfigEtag)
        : answerer.flag(snapshot, target.key, text, headers);
    } catch (error) {
      return failed(req, error);
    }
  }

  /** Once the body is read (or failed to be): the reply is sent; a throw while sending is logged. */
  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    snapshot: EnvironmentSnapshot,
    headers: RequestHeaders,
    error: unknown,
    text?: string,
  ): void {
    try {
      respond(res, target, error ? failed(req, error) : replyTo(req, target, snapshot, headers, text!));
    } catch (error) {
      logger.error(`${req.method} ${target.route} failed: ${String(error)}`);
    }
  }

  /** Callbacks rather than an async function: no promise and no microtask turn per request. */
  function serve(req: IncomingMessage, res: ServerResponse, target: Target): void {
    const headers = new NodeRequestHeaders(req);
    if (mayIdentifyClient(req.rawHeaders)) metrics.countClient(headers);
    if (target.stream) return openStream(req, res, target.stream, target, headers);
    let snapshot: EnvironmentSnapshot;
    try {
      snapshot = environmentFor(store, headers);
    } catch (error) {
      return respond(res, target, failed(req, error));
    }
    readNodeBodyWith(req, req.headers["content-length"], maxBodyBytes, (error, text) =>
      answer(req, res, target, snapshot, headers, error, text),
    );
  }

  /** The stream's head (CORS and the SSE headers, as h3 would send them) and its first bytes, or the error. */
  function openStream(req: IncomingMessage, res: ServerResponse, kind: StreamKind, target: Target, headers: RequestHeaders): void {
    const events = streams!; // plainRequests passes a stream's route only when there are streams
    const request: StreamRequest = { headers, query: target.query, remoteAddress: req.socket.remoteAddress };
    let stream: SseStreamOptions;
    try {
      stream = events.open(events.authorize(kind, request), request, res);
    } catch (error) {
      return respond(res, target, failed(req, error));
    }
    counted[target.route](200);
    startNodeSse(res, ANY_ORIGIN_CORS_HEADERS, stream);
  }

  return (req, res) => {
    const target = plainTarget(req);
    if (!target) return false;
    try {
      serve(req, res, target);
    } catch (error) {
      logger.error(`${req.method} ${target.route} failed: ${String(error)}`);
    }
    return true;
  };
}
