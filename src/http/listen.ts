/**
 * The listener: listhen, held to the contract of a CLI server — exactly this host and port or
 * an error naming them, our own signal handling, and a close() that never waits on open streams.
 * listhen binds the server (port checks, the self-signed certificate for `--https`, the URL);
 * its connection tracking for a graceful shutdown (http-shutdown: two listeners added to every
 * request) is taken off again, since close() here does that job with Node's own calls.
 */
import { STATUS_CODES, ServerResponse, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { toNodeHandler, type H3 } from "h3";
import { listen } from "listhen";
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

export class PortInUseError extends Error {
  constructor(readonly host: string, readonly port: number) {
    super(`port ${port} on ${host} is not available (in use, or blocked); choose another with --port, or --port 0 for any free port`);
  }
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
  const { port, host } = options;
  const handler = withFastPath(withReasonPhrases(toNodeHandler(app)), options.fastPath);
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
    if (/available port|EADDRINUSE|EACCES/i.test(String((error as Error).message))) throw new PortInUseError(host, port);
    throw error;
  }
  const bound = (listener.server.address() as { port: number }).port;
  if (port !== 0 && bound !== port) {
    // listhen silently remaps ports browsers consider unsafe (6000, 6665, ...).
    await listener.close();
    throw new PortInUseError(host, port);
  }
  const server = listener.server as unknown as Server;
  for (const other of server.listeners("request")) if (other !== handler) server.off("request", other as NodeHandler);
  server.on("clientError", answerClientError);
  // Node's default would end idle keep-alive sockets after 5 s; clients polling OFREP reuse them.
  server.keepAliveTimeout = 65_000;
  return {
    url: listener.url.replace(/\/$/, ""),
    port: bound,
    server,
    close: () => closeServer(server),
  };
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
