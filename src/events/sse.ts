/**
 * A Server-Sent Events stream. Under Node it is written straight to the response (writeNodeSse):
 * the encoded text of each event goes to the socket as is, with no web stream, reader or copy per
 * client, which is what keeps a stream cheap to open and hold by the ten thousand. Elsewhere it is
 * a web ReadableStream (createSseResponse). Either way the unsent data is the client's backlog:
 * when it grows past `maxBufferedBytes` the client is cut off rather than buffered for without
 * limit.
 */
import type { ServerResponse } from "node:http";
import type { Subscriber } from "./channel.js";

export type SseCloseReason = "client" | "server" | "slow";

export interface SseStreamOptions {
  contentType: string;
  keyDigest: string;
  ip: string;
  maxBufferedBytes: number;
  /** Called once the response exists; returns the function that detaches the subscriber. */
  attach(subscriber: Subscriber): () => void;
  /**
   * Ends the connection at once, dropping what is queued for it (here and in the kernel). Called
   * for a client that fell too far behind: closing the stream alone would leave its socket open
   * with the whole backlog still waiting to be written.
   */
  cutOff?(): void;
  onClose?(reason: SseCloseReason): void;
}

const encoder = new TextEncoder();

/** The first bytes: they flush the headers at once and tell EventSource how soon to reconnect. */
const RETRY = "retry: 2000\n\n";

const sseHeaders = (contentType: string): [string, string][] => [
  ["content-type", contentType],
  ["cache-control", "no-cache"],
  ["x-accel-buffering", "no"],
];

/**
 * The stream on a Node response, after `headers` (those already set for this response, e.g.
 * CORS) and the SSE headers. Resolves once the response has closed, whoever closed it.
 */
export function writeNodeSse(res: ServerResponse, headers: Iterable<[string, string]>, options: SseStreamOptions): Promise<void> {
  let detach: (() => void) | undefined;
  let closed = false;
  const finish = (reason: SseCloseReason) => {
    if (closed) return;
    closed = true;
    detach?.();
    options.onClose?.(reason);
    if (reason === "client") return;
    if (reason === "slow" && options.cutOff) return options.cutOff();
    res.end();
  };
  const subscriber: Subscriber = {
    keyDigest: options.keyDigest,
    ip: options.ip,
    send(text) {
      if (closed) return;
      // Bytes not yet handed to the kernel, in the response and its socket.
      if (res.writableLength > options.maxBufferedBytes) return finish("slow");
      res.write(text);
    },
    close: () => finish("server"),
  };
  const done = new Promise<void>((resolve) => {
    res.once("close", () => {
      finish("client");
      resolve();
    });
  });
  if (res.destroyed) {
    // The client left before the stream started: never attach (nothing would detach it).
    closed = true;
    options.onClose?.("client");
    return Promise.resolve();
  }
  res.writeHead(200, [...headers, ...sseHeaders(options.contentType)].flat());
  res.write(RETRY);
  detach = options.attach(subscriber);
  return done;
}

export function createSseResponse(options: SseStreamOptions): Response {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let detach: (() => void) | undefined;
  let closed = false;

  const finish = (reason: SseCloseReason) => {
    if (closed) return;
    closed = true;
    detach?.();
    options.onClose?.(reason);
    if (reason === "client") return;
    if (reason === "slow" && options.cutOff) return options.cutOff();
    try {
      controller.close();
    } catch {
      // already closed by the runtime
    }
  };

  const subscriber: Subscriber = {
    keyDigest: options.keyDigest,
    ip: options.ip,
    send(text) {
      if (closed) return;
      // desiredSize = highWaterMark (0) - queued bytes: how far behind the client is.
      if ((controller.desiredSize ?? 0) < -options.maxBufferedBytes) return finish("slow");
      controller.enqueue(encoder.encode(text));
    },
    close: () => finish("server"),
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        c.enqueue(encoder.encode(RETRY));
        detach = options.attach(subscriber);
      },
      cancel: () => finish("client"),
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );

  return new Response(body, { headers: sseHeaders(options.contentType) });
}
