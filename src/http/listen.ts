/**
 * The listener, held to the contract of a CLI server: exactly this host and port or an error
 * naming them, our own signal handling, and a close() that never waits on open streams. A plain
 * node:http server, unless listhen is needed (`--https`: the self-signed certificate; `--public`:
 * the network URL; an all-interfaces host): then listhen binds it, and its connection tracking
 * for a graceful shutdown (http-shutdown: two listeners added to every request) is taken off
 * again, since close() here does that job with Node's own calls.
 */
import { createServer, STATUS_CODES, ServerResponse, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { toNodeHandler, type H3 } from "h3";
import { isUnsafePort } from "get-port-please";
import { HEADERS_TOO_LARGE_RESPONSE } from "./errors.js";
import type { NodeFastPath } from "./fast-path.js";

export interface ListenOptions {
  port: number;
  host: string;
  https?: boolean;
  /** Listen on all interfaces and show the network URL (and a QR code) for other devices. */
  public?: boolean;
  /** Tried before h3 for every request (fast-path.ts). */
  fastPath?: NodeFastPath;
}

export interface Listening {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Why a port could not be had: each says what happened, not a guess between several things. */
export type PortProblem = "in-use" | "privileged" | "unsafe";

const PORT_PROBLEMS: Record<PortProblem, (port: number, host: string) => string> = {
  "in-use": (port, host) => `port ${port} on ${host} is in use by another program`,
  privileged: (port) => `port ${port} is below 1024 and this user may not listen on it`,
  unsafe: (port) => `port ${port} is one that browsers and fetch() refuse to connect to (their list of unsafe ports)`,
};

export class PortUnavailableError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly problem: PortProblem,
  ) {
    super(`${PORT_PROBLEMS[problem](port, host)}; choose another with --port, or --port 0 for any free port`);
  }
}

/** The port problem an error from listen() reports, if it is one. */
function portProblemOf(error: unknown): PortProblem | undefined {
  const text = `${(error as NodeJS.ErrnoException).code ?? ""} ${(error as Error).message ?? ""}`;
  if (/EACCES/.test(text)) return "privileged";
  if (/EADDRINUSE|available port/i.test(text)) return "in-use";
  return undefined;
}

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * A web Response carries an empty status text unless one is given, and Node writes it as is
 * (`HTTP/1.1 200 `); this fills in the standard reason phrase instead.
 */
function withReasonPhrases(handler: NodeHandler): NodeHandler {
  return (req, res) => {
    res.writeHead = writeHeadWithReason;
    return handler(req, res);
  };
}

const withFastPath = (handler: NodeHandler, fastPath: NodeFastPath | undefined): NodeHandler =>
  fastPath ? (req, res) => fastPath(req, res) || handler(req, res) : handler;

const writeHead = ServerResponse.prototype.writeHead as (...args: unknown[]) => ServerResponse;
function writeHeadWithReason(this: ServerResponse, status: number, ...rest: unknown[]): ServerResponse {
  if (rest[0] === "") rest[0] = STATUS_CODES[status] ?? "";
  return writeHead.call(this, status, ...rest);
}

/**
 * What Node does for a request it cannot parse (a listener replaces its default), except that a
 * head over the size limit gets the JSON error body every other error has.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const answered = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !answered && error.code !== "ECONNRESET") {
    if (error.code === "HPE_HEADER_OVERFLOW") socket.write(HEADERS_TOO_LARGE_RESPONSE);
    else if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") socket.write("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
    else socket.write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  }
  socket.destroy(error);
}

export async function listenApp(app: H3, options: ListenOptions): Promise<Listening> {
  // Ports browsers and fetch() refuse to call (6000, 6665, ...): listhen would move elsewhere, we say so.
  if (options.port !== 0 && isUnsafePort(options.port)) throw new PortUnavailableError(options.host, options.port, "unsafe");
  const handler = withFastPath(withReasonPhrases(toNodeHandler(app)), options.fastPath);
  const { server, url } = needsListhen(options) ? await listenWithListhen(handler, options) : await listenPlain(handler, options);
  server.on("clientError", answerClientError);
  // Node's default would end idle keep-alive sockets after 5 s; clients polling OFREP reuse them.
  server.keepAliveTimeout = 65_000;
  return {
    url,
    port: (server.address() as AddressInfo).port,
    server,
    close: () => closeServer(server),
  };
}

/** A host name or address listhen would take as it is (it replaces others with `localhost`). */
const PLAIN_HOSTNAME = /^(?!-)[\d.:A-Za-z-]{1,63}(?<!-)$/;
const ANY_HOST = new Set(["", "0.0.0.0", "::"]);

/**
 * listhen is loaded (a tenth of a second) only for what it adds: the `--https` certificate, the
 * `--public` network URL and QR code, and its own rules for an all-interfaces or odd host.
 */
const needsListhen = ({ https, public: isPublic, host }: ListenOptions): boolean =>
  Boolean(https || isPublic) || ANY_HOST.has(host) || !PLAIN_HOSTNAME.test(host);

/** `http://host:port`, as listhen writes it (IPv6 in brackets, no `:80`). */
const urlOf = (host: string, port: number): string => `http://${host.includes(":") ? `[${host}]` : host}${port === 80 ? "" : `:${port}`}`;

/** A plain node:http server on exactly this host and port, or a PortUnavailableError. */
async function listenPlain(handler: NodeHandler, { port, host }: ListenOptions): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    const problem = portProblemOf(error);
    if (problem) throw new PortUnavailableError(host, port, problem);
    throw error;
  }
  return { server, url: urlOf(host, (server.address() as AddressInfo).port) };
}

async function listenWithListhen(handler: NodeHandler, options: ListenOptions): Promise<{ server: Server; url: string }> {
  const { port, host } = options;
  const { listen } = await import("listhen");
  let listener;
  try {
    listener = await listen(handler, {
      // Strict: listhen would otherwise move to another port without a word.
      port: port === 0 ? 0 : { port, random: false, alternativePortRange: [] as unknown as [number, number] },
      hostname: host,
      public: options.public ?? false,
      showURL: false,
      qr: options.public ?? false,
      https: options.https ?? false,
      autoClose: false, // we own SIGINT/SIGTERM
      isProd: false, // keep port 0 ephemeral even with NODE_ENV=production
      isTest: false,
      open: false,
      clipboard: false,
      extraURLs: [],
    } as Parameters<typeof listen>[1]);
  } catch (error) {
    const problem = portProblemOf(error);
    if (problem) throw new PortUnavailableError(host, port, problem);
    throw error;
  }
  const bound = (listener.server.address() as AddressInfo).port;
  if (port !== 0 && bound !== port) {
    // Whatever else listhen would remap without a word (unsafe ports are refused before binding).
    await listener.close();
    throw new PortUnavailableError(host, port, "in-use");
  }
  const server = listener.server as unknown as Server;
  // http-shutdown's per-request listener: close() below does its job.
  for (const other of server.listeners("request")) if (other !== handler) server.off("request", other as NodeHandler);
  return { server, url: listener.url.replace(/\/$/, "") };
}

/**
 * Stops accepting connections and ends the idle ones at once; a response still being written
 * gets a second to finish, then every connection left (event streams above all) is cut.
 */
function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), 1_000);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
