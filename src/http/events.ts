/** The SSE routes (DESIGN §7): the primary change stream and the OFREP stream. */
import { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { H3, H3Event } from "h3";
import type { EventHub, StreamKind } from "../events/hub.js";
import type { FaultInjector } from "../fixture/faults.js";
import { createSseResponse, writeNodeSse, type SseStreamOptions } from "../events/sse.js";
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

export function registerEventRoutes(app: H3, options: EventRoutesOptions): void {
  const { store, hub, logger } = options;

  const open = (event: H3Event, snapshot: EnvironmentSnapshot, kind: StreamKind, key: string, contentType: string) => {
    const ip = clientIp(event, options.clientIpHeader);
    if (options.maxStreamsPerIp !== undefined && hub.streamsFrom(ip) >= options.maxStreamsPerIp) {
      throw apiError(429, "RATE_LIMITED", `too many open streams from ${ip} (at most ${options.maxStreamsPerIp})`, {
        headers: { "retry-after": "5" },
      });
    }
    logger.info(`stream opened: ${kind} ${snapshot.name} from ${ip}`);
    const node = event.runtime?.node;
    const releaseAddress = hub.holdAddress(ip);
    // The address stays counted until the connection is gone (under Node: the response closed).
    node?.res?.once("close", releaseAddress);
    const stream: SseStreamOptions = {
      contentType,
      keyDigest: keyDigest(key),
      ip,
      maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
      attach: (subscriber) => hub.subscribe(snapshot.name, kind, subscriber, lastEventId(event)),
      // A reset, not a graceful close: the kernel drops the unsent backlog instead of keeping
      // it (and the socket) until a client that reads nothing finally goes away.
      cutOff: node ? () => resetConnection(node.req.socket) : undefined,
      onClose: (reason) => {
        if (!node?.res) releaseAddress();
        if (reason === "slow") logger.warn(`stream dropped: ${kind} ${snapshot.name} from ${ip} fell too far behind; connection reset`);
        else logger.info(`stream closed by ${reason}: ${kind} ${snapshot.name} from ${ip}`);
      },
    };
    // Under Node the stream is written to the response directly, with the headers set so far
    // (CORS); the handler settles when the response has closed, and h3 then has nothing to send.
    if (node?.res instanceof ServerResponse) return writeNodeSse(node.res, event.res.headers, stream).then(() => null);
    return createSseResponse(stream);
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
