/**
 * HTTP/1.1 and cleartext HTTP/2 on one port, as flagd serves gRPC, gRPC-Web and Connect. Node's
 * HTTP/2 server falls back to HTTP/1 only over TLS (`allowHTTP1` is a TLS option), so each
 * connection's first bytes are read here: the HTTP/2 connection preface (RFC 9113 §3.4, which a
 * gRPC client sends at once) hands it to the HTTP/2 server, anything else to the HTTP/1.1 server.
 * The bytes read are put back, and both servers answer through the one request handler.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  constants as http2Constants,
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
  type ServerHttp2Stream,
} from "node:http2";
import type { AddressInfo, Socket } from "node:net";

/** What every HTTP/2 connection starts with, and no HTTP/1 request can (PRI is no method). */
export const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** A connection that has sent nothing for this long is closed before it is handed to either server. */
const FIRST_BYTES_TIMEOUT_MS = 10_000;

/** How long an HTTP/2 connection has to answer the PING sent after a reset (see closeIfEndedForResets). */
const PING_ANSWER_TIMEOUT_MS = 10_000;

export type OnePortRequest = IncomingMessage | Http2ServerRequest;
export type OnePortResponse = ServerResponse | Http2ServerResponse;
export type OnePortHandler = (req: OnePortRequest, res: OnePortResponse) => void;

export interface OnePort {
  port: number;
  /** Stops accepting; open calls get `graceMs` to finish, then every connection is cut. */
  close(graceMs: number): Promise<void>;
}

/**
 * Reads the first bytes of a connection until they tell its protocol: the whole preface (HTTP/2),
 * or a byte that differs from it (HTTP/1.1). Then puts them back and calls `route` once.
 */
function sniffProtocol(socket: Socket, route: (http2: boolean) => void): void {
  let received: Buffer = Buffer.alloc(0);
  const done = (http2: boolean) => {
    socket.off("data", onData);
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(received);
    route(http2);
  };
  const onData = (chunk: Buffer) => {
    received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
    const n = Math.min(received.length, HTTP2_PREFACE.length);
    const matches = received.compare(HTTP2_PREFACE, 0, n, 0, n) === 0;
    if (!matches) done(false);
    else if (n === HTTP2_PREFACE.length) done(true);
  };
  socket.on("data", onData);
  socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, () => socket.destroy());
}

/**
 * Closes an HTTP/2 connection that Node's HTTP/2 layer ended on its own. A client that resets
 * streams faster than nghttp2's guard against rapid-reset floods allows (1000 at once, then 33 a
 * second; Node 20 cannot change that) is sent GOAWAY (INTERNAL_ERROR), and Node stops reading its
 * connection but neither closes it nor tells anyone: it would stay open, unread, for ever, and so
 * would the streams still open on it. Only a reset sets that off, so after one the connection is
 * sent a PING, which an ended connection never answers: it is closed when its time is up. (Resets
 * of streams already ended here count too, unseen; gRPC clients reset only streams still open.)
 */
function closeIfEndedForResets(session: Http2Session): void {
  let pinging = false;
  let resetWhilePinging = false;
  const check = () => {
    if (session.destroyed) return;
    pinging = true;
    resetWhilePinging = false;
    const unanswered = setTimeout(() => session.destroy(), PING_ANSWER_TIMEOUT_MS).unref();
    session.ping((error) => {
      clearTimeout(unanswered);
      pinging = false;
      // A reset read before the answer may have ended the connection after the PING went out.
      if (!error && resetWhilePinging) check();
    });
  };
  session.on("stream", (stream: ServerHttp2Stream) => {
    stream.once("close", () => {
      if (stream.rstCode === http2Constants.NGHTTP2_NO_ERROR) return;
      if (pinging) resetWhilePinging = true;
      else check();
    });
  });
}

/**
 * Listens on `host:port` (0: any free port) with both servers behind one handler. The HTTP/1.1
 * server is the one listening (its timeouts and connection tracking work as usual); its own
 * connection listener gets the connections that are not HTTP/2.
 */
export async function listenOnePort(handler: OnePortHandler, options: { host: string; port: number }): Promise<OnePort> {
  const http1 = createHttpServer(handler);
  const http2 = createHttp2Server(handler);
  const sessions = new Set<Http2Session>();
  http2.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    closeIfEndedForResets(session);
  });
  const sockets = new Set<Socket>();
  const asHttp1 = http1.listeners("connection") as ((socket: Socket) => void)[];
  http1.removeAllListeners("connection");
  http1.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy()); // before a server has it, nothing can be answered
    sniffProtocol(socket, (isHttp2) => {
      if (isHttp2) http2.emit("connection", socket);
      else {
        for (const listener of asHttp1) listener.call(http1, socket);
        socket.resume(); // the bytes put back reach its parser through "data"
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    http1.once("error", reject);
    http1.listen(options.port, options.host, () => {
      http1.off("error", reject);
      resolve();
    });
  });
  return {
    port: (http1.address() as AddressInfo).port,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        http1.close(() => {
          clearTimeout(force);
          resolve();
        }); // and closes idle HTTP/1.1 connections
        for (const session of sessions) session.close(); // GOAWAY: open calls may finish
        const force = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, graceMs);
      }),
  };
}
