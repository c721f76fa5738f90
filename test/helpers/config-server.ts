/**
 * A real HTTP server (node:http on 127.0.0.1, an ephemeral port) serving configuration documents
 * for URL sources: each path answers its document with an ETag and Last-Modified, honours
 * `If-None-Match` with 304, and can be made to fail (a status, a hang) or to stop listening
 * (connection refused) and come back on the same port. Every request is logged.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface ServedRequest {
  path: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
  status: number;
}

type Behaviour =
  { body: string | Uint8Array; etag: string; lastModified: string } | { status: number } | { hang: true } | { location: string };

export class ConfigServer {
  readonly requests: ServedRequest[] = [];
  readonly #paths = new Map<string, Behaviour>();
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;

  static async start(): Promise<ConfigServer> {
    const server = new ConfigServer();
    await server.listen();
    return server;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.#port}${path}`;
  }

  /** Serves `body` (text, or bytes as they are) at `path` from now on (a new ETag when it differs). */
  set(path: string, body: string | Uint8Array): void {
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`;
    this.#paths.set(path, { body, etag, lastModified: new Date().toUTCString() });
  }

  /** Answers `status` (with a body) at `path` from now on. */
  fail(path: string, status: number): void {
    this.#paths.set(path, { status });
  }

  /** Answers a 302 to `location` at `path` from now on. */
  redirect(path: string, location: string): void {
    this.#paths.set(path, { location });
  }

  /** Accepts requests at `path` and never answers them. */
  hang(path: string): void {
    this.#paths.set(path, { hang: true });
  }

  /** Requests made to `path` since index `from`. */
  requestsTo(path: string, from = 0): ServedRequest[] {
    return this.requests.slice(from).filter((r) => r.path === path);
  }

  /** Waits (bounded) until `count` more requests reached `path` after index `from`. */
  async waitRequests(path: string, count: number, from = this.requests.length, timeoutMs = 5_000): Promise<ServedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requestsTo(path, from).length < count) {
      if (Date.now() > deadline) throw new Error(`${count} requests to ${path} expected, ${this.requestsTo(path, from).length} came`);
      await sleep(10);
    }
    return this.requestsTo(path, from);
  }

  /** Stops listening and drops every connection: clients get connection refused. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server) await new Promise<void>((done) => server.close(() => done()));
  }

  /** Listens again, on the same port once one was taken. */
  async listen(): Promise<void> {
    const server = createServer((req, res) => this.#answer(req, res));
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(this.#port, "127.0.0.1", () => done());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const behaviour = this.#paths.get(path);
    const log = (status: number) =>
      this.requests.push({
        path,
        status,
        ...(req.headers["if-none-match"] !== undefined && { ifNoneMatch: req.headers["if-none-match"] }),
        ...(req.headers["if-modified-since"] !== undefined && { ifModifiedSince: req.headers["if-modified-since"] }),
      });
    if (behaviour === undefined) {
      log(404);
      res.writeHead(404).end("not found");
    } else if ("hang" in behaviour) {
      log(0);
    } else if ("location" in behaviour) {
      log(302);
      res.writeHead(302, { location: behaviour.location }).end();
    } else if ("status" in behaviour) {
      log(behaviour.status);
      res.writeHead(behaviour.status, { "content-type": "text/plain" }).end("failing on purpose");
    } else if (req.headers["if-none-match"] === behaviour.etag) {
      log(304);
      res.writeHead(304, { etag: behaviour.etag }).end();
    } else {
      log(200);
      res
        .writeHead(200, { "content-type": "application/yaml", etag: behaviour.etag, "last-modified": behaviour.lastModified })
        .end(behaviour.body);
    }
  }
}
