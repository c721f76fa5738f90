/**
 * The flagd port (`--flagd-port`): flagd's evaluation service (v1 and v2) and its sync service
 * as one Connect router, answering gRPC, gRPC-Web and Connect (JSON and binary) over HTTP/2 and
 * HTTP/1.1 on one port (one-port.ts), as flagd does, on the same host as the HTTP port. Calls
 * read and change nothing but what the HTTP routes do: see services.ts.
 *
 * In front of the router, for browsers (which reach a cleartext port over HTTP/1.1 only): the
 * Host check against DNS rebinding (hosts.ts's rule, as the HTTP port's details use it), and
 * CORS following `--cors-origin` as the HTTP port's public routes do.
 */
import type { ServerResponse } from "node:http";
import { constants as http2Constants } from "node:http2";
import { cors as connectCors, createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { isCorsOriginAllowed } from "h3";
import type { FaultInjector } from "../fixture/faults.js";
import { resetConnection } from "../http/events.js";
import { hostName } from "../http/hosts.js";
import type { Metrics } from "../http/metrics.js";
import type { OfrepAnswerer } from "../answers/ofrep-answers.js";
import type { Logger } from "../log/logger.js";
import type { FlagStore } from "../store/store.js";
import { flagSetOf } from "./flag-set.js";
import { listenOnePort, type OnePortHandler, type OnePortRequest, type OnePortResponse } from "./one-port.js";
import { EnvironmentSelector } from "./select.js";
import { CONNECTION, createFlagdServices, type Connection } from "./services.js";
import type { FlagdStreams } from "./streams.js";

export interface FlagdServerOptions {
  port: number;
  host: string;
  store: FlagStore;
  answerer: Pick<OfrepAnswerer, "evaluateFlag" | "evaluateAll">;
  streams: FlagdStreams;
  logger: Logger;
  /** Environments a selector may name (`--flagd-selector-by-name`); otherwise only keys select. */
  selectorByName?: readonly string[];
  faults?: FaultInjector;
  metrics?: Metrics;
  staticContext?: Readonly<Record<string, string>>;
  /** The largest message accepted (a request's context): larger ones get RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  maxStreamsPerIp?: number;
  /** Allowed CORS origin(s), as on the HTTP port; "*" (the default) allows any. */
  corsOrigin?: string | string[];
  /** Host names an HTTP/1.1 request may name (hosts.ts's allowedHosts); default: any. */
  isKnownHost?: (name: string) => boolean;
}

export interface FlagdListener {
  /** The port bound (the one asked for, or the free one found for 0). */
  port: number;
  /** `host:port`, as a flagd provider's host and port options take it. */
  address: string;
  close(): Promise<void>;
}

/** Raised when the flagd port cannot be bound. */
export class FlagdPortError extends Error {}

const hostPort = (host: string, port: number | undefined): string => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/** What a call's handlers know of its connection (see Connection). */
function connectionOf(req: OnePortRequest): Connection {
  const ip = req.socket.remoteAddress ?? "unknown";
  const peer = hostPort(ip, req.socket.remotePort);
  if ("stream" in req) {
    const { stream } = req;
    // ENHANCE_YOUR_CALM: what gRPC clients report as RESOURCE_EXHAUSTED.
    return { ip, peer, session: stream.session, cutOff: () => stream.close(http2Constants.NGHTTP2_ENHANCE_YOUR_CALM) };
  }
  return { ip, peer, session: undefined, cutOff: () => resetConnection(req.socket) };
}

/** Response headers a browser's client reads: gRPC-Web's status (grpc-status, grpc-message) and Connect's. */
const EXPOSED_HEADERS = connectCors.exposedHeaders.join(", ");

/**
 * gRPC's status message as gRPC's spec encodes it: percent-encoded only where not printable
 * ASCII, and `%`. Connect encodes it as a URI component (`:` as `%3A`), which grpc-js, the
 * flagd providers' client, decodes with decodeURI, which leaves `%3A` as it is.
 */
export function encodeGrpcMessage(text: string): string {
  let encoded = "";
  for (const byte of Buffer.from(text)) {
    encoded +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return encoded;
}

type NodeHeaders = Record<string, string | string[] | number | undefined>;

const reencodeGrpcMessage = (headers: NodeHeaders | undefined) => {
  const message = headers?.["grpc-message"];
  if (typeof message === "string") headers!["grpc-message"] = encodeGrpcMessage(decodeURIComponent(message));
  return headers;
};

/** A gRPC response's status message (in its head or its trailers) encoded as gRPC's spec says (see encodeGrpcMessage). */
function withGrpcMessages(res: OnePortResponse): void {
  const { writeHead, addTrailers } = res as unknown as {
    writeHead: (status: number, headers?: NodeHeaders) => unknown;
    addTrailers: (headers: NodeHeaders) => void;
  };
  Object.assign(res, {
    writeHead: (status: number, headers?: NodeHeaders) => writeHead.call(res, status, reencodeGrpcMessage(headers)),
    addTrailers: (headers: NodeHeaders) => addTrailers.call(res, reencodeGrpcMessage(headers)!),
  });
}

/**
 * An HTTP/1.1 request answered before all of it was read (a message too large): its connection
 * closes after the answer, as the HTTP port's 413 does, rather than wait, unread, for the
 * keep-alive timeout while the client is still sending.
 */
function closeIfUnread(req: OnePortRequest, res: ServerResponse): void {
  const { writeHead } = res;
  res.writeHead = ((...args: Parameters<ServerResponse["writeHead"]>) => {
    if (!req.complete) res.setHeader("connection", "close");
    return writeHead.apply(res, args);
  }) as ServerResponse["writeHead"];
}

/**
 * The Host check and CORS, before the router. The Host check is for HTTP/1.1, the only way a
 * browser speaks to a cleartext port: gRPC clients (HTTP/2) name whatever host they were given.
 */
function frontDoor(handle: OnePortHandler, options: Pick<FlagdServerOptions, "corsOrigin" | "isKnownHost">): OnePortHandler {
  const origin = options.corsOrigin ?? "*";
  const cors: { origin: "*" | string[] } = { origin: origin === "*" ? "*" : Array.isArray(origin) ? origin : [origin] };
  const { isKnownHost } = options;
  return (req, res) => {
    if (isKnownHost && req.httpVersionMajor === 1 && !isKnownHost(hostName(req.headers.host ?? ""))) {
      res.writeHead(403, { "content-type": "text/plain; charset=utf-8" });
      res.end("this host name is not one of this server's (DNS rebinding guard); name it with --admin-host\n");
      return;
    }
    const requestOrigin = req.headers.origin;
    const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    if (requestOrigin !== undefined && isCorsOriginAllowed(requestOrigin, cors)) {
      res.setHeader("access-control-allow-origin", cors.origin === "*" ? "*" : requestOrigin);
      if (cors.origin !== "*") res.setHeader("vary", "origin");
      if (!preflight) res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
      else {
        res.setHeader("access-control-allow-methods", connectCors.allowedMethods.join(", "));
        // Whatever it asks for, as on the HTTP port (no credentials are involved): Connect's and
        // gRPC-Web's headers, `flagd-selector`, and any header --context-from-header reads.
        const asked = req.headers["access-control-request-headers"];
        if (asked) res.setHeader("access-control-allow-headers", asked);
        res.setHeader("vary", cors.origin === "*" ? "access-control-request-headers" : "origin, access-control-request-headers");
        res.setHeader("access-control-max-age", "600");
      }
    }
    if (!preflight) {
      if (/^application\/grpc(?!-web)/.test(req.headers["content-type"] ?? "")) withGrpcMessages(res);
      // A request answered before all of it was read (too large): its HTTP/1.1 connection closes
      // after the answer, not left waiting for the rest (see closeIfUnread).
      if (req.httpVersionMajor === 1) closeIfUnread(req, res as ServerResponse);
      return handle(req, res);
    }
    res.writeHead(204);
    res.end();
  };
}

export async function listenFlagd(options: FlagdServerOptions): Promise<FlagdListener> {
  const services = createFlagdServices({
    answerer: options.answerer,
    selector: new EnvironmentSelector(options.store, options.selectorByName),
    streams: options.streams,
    logger: options.logger,
    faults: options.faults,
    metrics: options.metrics,
    staticContext: options.staticContext,
    maxStreamsPerIp: options.maxStreamsPerIp,
  });
  // Every snapshot's flag set is built as it comes, sync client or not: a flag that keeps its last
  // good version later is then sent as it was resolved (see flag-set.ts).
  const buildFlagSets = () => {
    for (const snapshot of options.store.environments.values()) flagSetOf(snapshot);
  };
  buildFlagSets();
  const stopBuilding = options.store.onReplace(buildFlagSets);
  const router = connectNodeAdapter({
    routes: services.routes,
    readMaxBytes: options.maxMessageBytes,
    // Responses go uncompressed, as flagd's and grpc-js's do: compressing a flag set costs a trip
    // through zlib's threads on each side, for a client on the same machine or network.
    compressMinBytes: Infinity,
    contextValues: (req) => createContextValues().set(CONNECTION, connectionOf(req)),
  });

  let listening;
  try {
    listening = await listenOnePort(frontDoor(router, options), { host: options.host, port: options.port });
  } catch (error) {
    stopBuilding();
    services.close();
    throw new FlagdPortError(
      `flagd port ${options.port} on ${options.host} is not available (${(error as Error).message}); choose another with --flagd-port, or 0 for any free port`,
    );
  }
  options.metrics?.gauge("flagserve_flagd_streams", "Open flagd streams (EventStream, SyncFlags)", () => options.streams.size);
  const bound = listening;
  return {
    port: bound.port,
    address: hostPort(options.host, bound.port),
    close: async () => {
      stopBuilding();
      services.close(); // streams end first, or the shutdown would wait on them
      await bound.close(1000); // in-flight calls get a moment to finish; then the rest are cut
    },
  };
}
