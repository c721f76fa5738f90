/** The SSE routes (see docs/api.md): the primary change stream and the OFREP stream. */
import { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { H3, H3Event } from "h3";
import type { Subscriber } from "../events/channel.js";
import type { EventHub, StreamKind } from "../events/hub.js";
import { createSseResponse, nodeSseBody, sseHeaders, type SseCloseReason, type SseStreamOptions } from "../events/sse.js";
import type { RequestHeaders } from "../evaluation/context.js";
import { apiError } from "../evaluation/problem.js";
import type { FaultRoute } from "../fixture/fault-rules.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { Logger } from "../log/logger.js";
import { keyDigest } from "../store/keys.js";
import type { FlagStore } from "../store/store.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { environmentForKey, keyFromHeaders } from "./auth.js";
import { httpError, withHttpErrors } from "./errors.js";

export interface EventStreamsOptions {
  store: FlagStore;
  hub: EventHub;
  logger: Logger;
  /** Take the client's address from this header (e.g. X-Forwarded-For) instead of the socket. */
  clientIpHeader?: string;
  maxStreamsPerIp?: number;
  /** A client whose unsent data exceeds this is disconnected. */
  maxBufferedBytes?: number;
}

/** What opening a stream reads of a request, web or Node alike. */
export interface StreamRequest {
  headers: RequestHeaders;
  /** The request target's query, when it has one. */
  query: URLSearchParams | undefined;
  /** The peer's address, when known. */
  remoteAddress: string | undefined;
}

export const OFREP_STREAM_PATH = "/ofrep/v1/events";
export const EVENTS_PATH = "/api/v1/flags/events";
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/** The client's address: the first in `header` (e.g. X-Forwarded-For) when configured and sent, else the peer's. */
function clientAddress(headers: RequestHeaders, remoteAddress: string | undefined, header?: string): string {
  if (header) {
    // X-Forwarded-For lists the original client first.
    const value = headers.get(header)?.split(",")[0]?.trim();
    if (value) return value;
  }
  return remoteAddress ?? "unknown";
}

export const clientIp = (event: H3Event, header?: string): string =>
  clientAddress(event.req.headers, event.runtime?.node?.req.socket.remoteAddress, header);

/** The stream advertised in evaluate-all's `eventStreams`, token included: EventSource cannot send headers. */
export const ofrepStreamPath = (snapshot: EnvironmentSnapshot): string => `${OFREP_STREAM_PATH}?token=${snapshot.streamToken}`;

/** TCP reset where the socket allows it (a TLS socket does not), else an immediate destroy. */
export function resetConnection(socket: Socket): void {
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

function lastEventId(request: StreamRequest): number | undefined {
  const raw = request.headers.get("last-event-id") ?? request.query?.get("lastEventId") ?? null;
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

/**
 * What one open stream needs from the routes, in one object: nothing of the request is kept
 * (under Node the request is done once the stream starts), so the open stream costs this, the
 * SSE stream and the connection.
 */
class RouteStream implements SseStreamOptions {
  #released = false;

  constructor(
    private readonly routes: { hub: EventHub; logger: Logger },
    private readonly env: string,
    private readonly kind: StreamKind,
    readonly contentType: string,
    readonly keyDigest: string,
    readonly ip: string,
    readonly maxBufferedBytes: number,
    private readonly lastEventId: number | undefined,
    /** Under Node: the connection, reset to cut off a client too far behind. */
    private readonly socket: Socket | undefined,
  ) {}

  attach(subscriber: Subscriber): () => void {
    return this.routes.hub.subscribe(this.env, this.kind, subscriber, this.lastEventId);
  }

  /** A reset, not a graceful close: the kernel drops the unsent backlog instead of keeping it. */
  cutOff(): boolean {
    if (this.socket) resetConnection(this.socket);
    return this.socket !== undefined;
  }

  onClose(reason: SseCloseReason): void {
    // Under Node the address stays counted until the connection is gone (`release`).
    if (!this.socket) this.release();
    const { logger } = this.routes;
    if (reason === "slow") logger.warn(`stream dropped: ${this.kind} ${this.env} from ${this.ip} fell too far behind; connection reset`);
    else logger.info(`stream closed by ${reason}: ${this.kind} ${this.env} from ${this.ip}`);
  }

  /** The address no longer counts this stream (once only). */
  release = (): void => {
    if (this.#released) return;
    this.#released = true;
    this.routes.hub.releaseAddress(this.ip);
  };
}

/** A key's digest, computed once per key rather than once per stream (the keys are few). */
function digestCache(): (key: string) => string {
  const digests = new Map<string, string>();
  return (key) => {
    let digest = digests.get(key);
    if (digest === undefined) {
      if (digests.size >= 1000) digests.clear(); // keys come and go with rotations: stay bounded
      digests.set(key, (digest = keyDigest(key)));
    }
    return digest;
  };
}

/** A request allowed to open a stream: which one, of which environment, with which key. */
export interface StreamGrant {
  readonly kind: StreamKind;
  readonly snapshot: EnvironmentSnapshot;
  /** The key the stream is opened with: revoking it closes the stream (by its digest). */
  readonly key: string;
  readonly contentType: string;
}

/**
 * Opening event streams, as plain data: a request's headers, query and peer address in; a grant,
 * then the stream, out (or the 401 and 429 ApiErrors). Both ways in share it, the h3 routes
 * below and the Node fast path (fast-path.ts), so every rule is written once.
 */
export interface EventStreams {
  /** Who may open the stream of `kind`: the environment its key (or, on the OFREP stream, token) selects. */
  authorize(kind: StreamKind, request: StreamRequest): StreamGrant;
  /**
   * The stream, counted against the client's address; `res`, under Node, is the response it is
   * written to: the address is released when it closes, and its connection reset to cut off a
   * client too far behind.
   */
  open(grant: StreamGrant, request: StreamRequest, res?: ServerResponse): SseStreamOptions;
}

export function createEventStreams(options: EventStreamsOptions): EventStreams {
  const { store, hub, logger } = options;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const routes = { hub, logger };
  const digestOf = digestCache();

  function authorize(kind: StreamKind, request: StreamRequest): StreamGrant {
    if (kind === "ofrep") {
      const snapshot = store.authenticateStreamToken(request.query?.get("token") ?? "");
      if (!snapshot) throw apiError(401, "UNAUTHORIZED", "unknown or missing stream token");
      return { kind, snapshot, key: snapshot.apiKey, contentType: "text/event-stream" };
    }
    const key = keyFromHeaders(request.headers);
    const snapshot = environmentForKey(store, key);
    // EventSource and browsers need text/event-stream; the seed document says text/plain.
    const wantsEventStream = (request.headers.get("accept") ?? "").includes("text/event-stream");
    return { kind, snapshot, key: key!, contentType: wantsEventStream ? "text/event-stream" : "text/plain; charset=utf-8" };
  }

  function open({ kind, snapshot, key, contentType }: StreamGrant, request: StreamRequest, res?: ServerResponse): RouteStream {
    const ip = clientAddress(request.headers, request.remoteAddress, options.clientIpHeader);
    if (options.maxStreamsPerIp !== undefined && hub.streamsFrom(ip) >= options.maxStreamsPerIp) {
      throw apiError(429, "RATE_LIMITED", `too many open streams from ${ip} (at most ${options.maxStreamsPerIp})`, {
        headers: { "retry-after": "5" },
      });
    }
    logger.info(`stream opened: ${kind} ${snapshot.name} from ${ip}`);
    const stream = new RouteStream(
      routes,
      snapshot.name,
      kind,
      contentType,
      digestOf(key),
      ip,
      maxBufferedBytes,
      lastEventId(request),
      res?.socket ?? undefined,
    );
    hub.holdAddress(ip);
    // The address stays counted until the connection is gone, however the stream ended.
    res?.on("close", stream.release);
    return stream;
  }

  return { authorize, open };
}

/** The route of each stream, and the route name fault rules give it. */
const EVENT_STREAM_ROUTES: Readonly<Record<StreamKind, { path: string; faultRoute: FaultRoute }>> = {
  events: { path: EVENTS_PATH, faultRoute: "events" },
  ofrep: { path: OFREP_STREAM_PATH, faultRoute: "ofrep-events" },
};

export function registerEventRoutes(app: H3, streams: EventStreams, faults?: FaultInjector): void {
  for (const [kind, { path, faultRoute }] of Object.entries(EVENT_STREAM_ROUTES) as [
    StreamKind,
    (typeof EVENT_STREAM_ROUTES)[StreamKind],
  ][]) {
    app.get(path, async (event) => {
      const node = event.runtime?.node;
      const request: StreamRequest = {
        headers: event.req.headers,
        query: event.url.searchParams,
        remoteAddress: node?.req.socket.remoteAddress,
      };
      const grant = await withHttpErrors(() => streams.authorize(kind, request));
      const fault = faults?.apply(event, faultRoute, grant.snapshot.name);
      if (fault) await fault;
      const res = node?.res instanceof ServerResponse ? node.res : undefined;
      const stream = await withHttpErrors(() => streams.open(grant, request, res));
      if (!res) return createSseResponse(stream);
      // Under Node the stream is written to the response directly: srvx writes the head with the
      // headers set on the event (CORS, and these), then hands the response to the body's `pipe`.
      for (const [name, value] of sseHeaders(stream.contentType)) event.res.headers.set(name, value);
      return nodeSseBody(stream);
    });
    app.all(path, (event) => {
      throw httpError(405, "METHOD_NOT_ALLOWED", `${event.req.method} is not allowed here; use GET`, {
        headers: { allow: "GET, OPTIONS" },
      });
    });
  }
}
