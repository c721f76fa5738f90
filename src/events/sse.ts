/**
 * A Server-Sent Events stream. Under Node it is written straight to the response (NodeSseStream):
 * each event's frame, encoded once for all clients, goes to the socket (as one prebuilt chunk when
 * nothing is queued before it), with no web stream, reader or copy per client, which is what keeps
 * a stream cheap to open and hold by the ten thousand. Elsewhere it is
 * a web ReadableStream (createSseResponse). Either way the unsent data is the client's backlog:
 * when it grows past `maxBufferedBytes` the client is cut off rather than buffered for without
 * limit. One `SseStream` per client is all a stream keeps: it is the channel's subscriber.
 */
import type { ServerResponse } from "node:http";
import type { Subscriber } from "./channel.js";
import type { SseFrame } from "./frame.js";

export type SseCloseReason = "client" | "server" | "slow";

export interface SseStreamOptions {
  readonly contentType: string;
  readonly keyDigest: string;
  readonly ip: string;
  readonly maxBufferedBytes: number;
  /** Called once the response exists; returns the function that detaches the subscriber. */
  attach(subscriber: Subscriber): () => void;
  /**
   * Ends the connection at once, dropping what is queued for it (here and in the kernel); false
   * when it cannot, and the stream is ended as usual. Called for a client that fell too far
   * behind: closing the stream alone would leave its socket open with the whole backlog still
   * waiting to be written.
   */
  cutOff?(): boolean;
  onClose?(reason: SseCloseReason): void;
}

const encoder = new TextEncoder();

/** The first bytes: they flush the headers at once and tell EventSource how soon to reconnect. */
const RETRY = "retry: 2000\n\n";

/** In name order, as h3 sends headers: a head written straight to Node reads the same. */
export const sseHeaders = (contentType: string): [string, string][] => [
  ["cache-control", "no-cache"],
  ["content-type", contentType],
  ["x-accel-buffering", "no"],
];

/** One client's stream: what the channel writes to, and how it ends, whatever carries the bytes. */
abstract class SseStream implements Subscriber {
  #closed = false;
  #detach: (() => void) | undefined;

  constructor(protected readonly options: SseStreamOptions) {}

  get keyDigest(): string {
    return this.options.keyDigest;
  }

  get ip(): string {
    return this.options.ip;
  }

  /** Bytes written and not yet taken by the client. */
  protected abstract backlog(): number;
  protected abstract write(text: string): void;
  protected abstract end(): void;

  /** A frame, encoded once for every client it goes to; by default written as its text. */
  protected writeFrame(frame: SseFrame): void {
    this.write(frame.text);
  }

  /** Writes the retry hint and joins the channel. */
  start(): void {
    this.write(RETRY);
    this.#detach = this.options.attach(this);
  }

  send(frame: SseFrame): void {
    if (this.#closed) return;
    if (this.backlog() > this.options.maxBufferedBytes) return this.finish("slow");
    this.writeFrame(frame);
  }

  close(): void {
    this.finish("server");
  }

  finish(reason: SseCloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#detach?.();
    this.options.onClose?.(reason);
    if (reason === "client") return;
    if (reason === "slow" && this.options.cutOff?.()) return;
    this.end();
  }
}

class NodeSseStream extends SseStream {
  constructor(
    private readonly res: ServerResponse,
    options: SseStreamOptions,
  ) {
    super(options);
  }

  protected backlog(): number {
    return this.res.writableLength; // in the response and its socket
  }

  protected write(text: string): void {
    this.res.write(text);
  }

  /**
   * Straight to the socket as one HTTP/1.1 chunk built once for every client, when the response
   * is chunked and has handed all it wrote (its head included) to the socket: the very bytes
   * `res.write` would send, without its work per client (converting the string, four pieces, a
   * cork and a writev), which is most of a fan-out's time in JavaScript. Otherwise through the
   * response (a HEAD or HTTP/1.0 response, one still queued behind another on its connection, or
   * one already ended, whose socket may carry the next response by now).
   */
  protected writeFrame(frame: SseFrame): void {
    const { res } = this;
    const socket = res.socket;
    if (frame.bytes.length === 0) return; // an empty chunk would end the response
    if (socket !== null && res.chunkedEncoding && !res.writableEnded && res.writableLength === socket.writableLength)
      socket.write(frame.chunk);
    else res.write(frame.bytes);
  }

  protected end(): void {
    this.res.end();
  }
}

/**
 * Starts the stream on a Node response, after `headers` and the SSE headers unless a head was
 * sent already; false when the client left before (it is then never attached: nothing would
 * detach it).
 */
export function startNodeSse(res: ServerResponse, headers: Iterable<readonly [string, string]>, options: SseStreamOptions): boolean {
  const stream = new NodeSseStream(res, options);
  if (res.destroyed) {
    stream.finish("client");
    return false;
  }
  // `on`, not `once` (which wraps every listener in two more objects): "close" comes once.
  res.on("close", () => stream.finish("client"));
  if (!res.headersSent) res.writeHead(200, [...headers, ...sseHeaders(options.contentType)].flat());
  stream.start();
  flattenHead(res);
  return true;
}

/**
 * Node keeps the head it sent (`_header`) for the response's life, as the string it was
 * concatenated into: some thirty string pieces, about 1 KiB per open stream. Reading a character
 * has V8 flatten it into one string in place, which frees the pieces; nothing else changes.
 */
function flattenHead(res: ServerResponse): void {
  const head = (res as { _header?: unknown })._header;
  if (typeof head === "string") head.charCodeAt(0);
}

/**
 * The stream as a response body that h3 hands to srvx like a Node stream: srvx writes the head
 * (status 200 and the headers set on the event, which must include `sseHeaders`), then calls
 * `pipe` with the Node response. The request handler is done at once, so nothing of the request
 * (event, web Request, promises) is kept for as long as the stream is open.
 */
export const nodeSseBody = (options: SseStreamOptions): { pipe(res: ServerResponse): void } => ({
  pipe: (res) => void startNodeSse(res, [], options),
});

class WebSseStream extends SseStream {
  #controller!: ReadableStreamDefaultController<Uint8Array>;

  readonly body = new ReadableStream<Uint8Array>(
    {
      start: (controller) => {
        this.#controller = controller;
        this.start();
      },
      cancel: () => this.finish("client"),
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );

  protected backlog(): number {
    // desiredSize = highWaterMark (0) - queued bytes.
    return -(this.#controller.desiredSize ?? 0);
  }

  protected write(text: string): void {
    this.#controller.enqueue(encoder.encode(text));
  }

  protected end(): void {
    try {
      this.#controller.close();
    } catch {
      // already closed by the runtime
    }
  }
}

export function createSseResponse(options: SseStreamOptions): Response {
  return new Response(new WebSseStream(options).body, { headers: sseHeaders(options.contentType) });
}
