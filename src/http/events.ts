/** The SSE routes (DESIGN §7): the primary change stream and the OFREP stream. */
import { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { H3, H3Event } from "h3";
import type { Subscriber } from "../events/channel.js";
import type { EventHub, StreamKind } from "../events/hub.js";
import type { FaultInjector } from "../fixture/faults.js";
import { createSseResponse, nodeSseBody, sseHeaders, type SseCloseReason, type SseStreamOptions } from "../events/sse.js";
import type { Logger } from "../log/logger.js";
import { keyDigest } from "../store/keys.js";
import type { FlagStore } from "../store/store.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { authenticate, presentedKey } from "./auth.js";
import { apiError } from "./errors.js";

export interface EventRoutesOptions {
  store: FlagStore;
  hub: EventHub;
  logger: Logger;
  /** Take the client's address from this header (e.g. X-Forwarded-For) instead of the socket. */
  clientIpHeader?: string;
  maxStreamsPerIp?: number;
  /** A client whose unsent data exceeds this is disconnected. */
  maxBufferedBytes?: number;
  faults?: FaultInjector;
}

export const OFREP_STREAM_PATH = "/ofrep/v1/events";
export const EVENTS_PATH = "/api/v1/flags/events";
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

export function clientIp(event: H3Event, header?: string): string {
  if (header) {
    // X-Forwarded-For lists the original client first.
    const value = event.req.headers.get(header)?.split(",")[0]?.trim();
    if (value) return value;
  }
  return event.runtime?.node?.req.socket.remoteAddress ?? "unknown";
}

/** The stream advertised in evaluate-all's `eventStreams`, token included: EventSource cannot send headers. */
export const ofrepStreamPath = (snapshot: EnvironmentSnapshot): string => `${OFREP_STREAM_PATH}?token=${snapshot.streamToken}`;

/** TCP reset where the socket allows it (a TLS socket does not), else an immediate destroy. */
function resetConnection(socket: Socket): void {
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

function lastEventId(event: H3Event): number | undefined {
  const raw = event.req.headers.get("last-event-id") ?? event.url.searchParams.get("lastEventId");
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

export function registerEventRoutes(app: H3, options: EventRoutesOptions): void {
  const { store, hub, logger } = options;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const routes = { hub, logger };
  const digestOf = digestCache();

  const open = (event: H3Event, snapshot: EnvironmentSnapshot, kind: StreamKind, key: string, contentType: string) => {
    const ip = clientIp(event, options.clientIpHeader);
    if (options.maxStreamsPerIp !== undefined && hub.streamsFrom(ip) >= options.maxStreamsPerIp) {
      throw apiError(429, "RATE_LIMITED", `too many open streams from ${ip} (at most ${options.maxStreamsPerIp})`, {
        headers: { "retry-after": "5" },
      });
    }
    logger.info(`stream opened: ${kind} ${snapshot.name} from ${ip}`);
    const res = event.runtime?.node?.res;
    const node = res instanceof ServerResponse ? res : undefined;
    const stream = new RouteStream(routes, snapshot.name, kind, contentType, digestOf(key), ip, maxBufferedBytes, lastEventId(event), node?.socket ?? undefined);
    hub.holdAddress(ip);
    if (!node) return createSseResponse(stream);
    // The address stays counted until the connection is gone, however the stream ended.
    node.on("close", stream.release);
    // Under Node the stream is written to the response directly: srvx writes the head with the
    // headers set on the event (CORS, and these), then hands the response to the body's `pipe`.
    for (const [name, value] of sseHeaders(contentType)) event.res.headers.set(name, value);
    return nodeSseBody(stream);
  };

  app.get(EVENTS_PATH, async (event) => {
    const snapshot = authenticate(event, store);
    const fault = options.faults?.apply(event, "events", snapshot.name);
    if (fault) await fault;
    // EventSource and browsers need text/event-stream; the seed document says text/plain.
    const wantsEventStream = (event.req.headers.get("accept") ?? "").includes("text/event-stream");
    return open(event, snapshot, "events", presentedKey(event)!, wantsEventStream ? "text/event-stream" : "text/plain; charset=utf-8");
  });

  app.get(OFREP_STREAM_PATH, async (event) => {
    const token = event.url.searchParams.get("token") ?? "";
    const snapshot = store.authenticateStreamToken(token);
    if (!snapshot) throw apiError(401, "UNAUTHORIZED", "unknown or missing stream token");
    const fault = options.faults?.apply(event, "ofrep-events", snapshot.name);
    if (fault) await fault;
    return open(event, snapshot, "ofrep", snapshot.apiKey, "text/event-stream");
  });

  for (const route of [EVENTS_PATH, OFREP_STREAM_PATH]) {
    app.all(route, (event) => {
      throw apiError(405, "METHOD_NOT_ALLOWED", `${event.req.method} is not allowed here; use GET`, { headers: { allow: "GET, OPTIONS" } });
    });
  }
}
