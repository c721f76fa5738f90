/**
 * A Server-Sent Events response built on a web ReadableStream. The stream's queue is the
 * client's backlog: when it grows past `maxBufferedBytes` the client is cut off rather than
 * buffered for without limit.
 */
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
        // The first bytes flush the headers at once and tell EventSource how soon to reconnect.
        c.enqueue(encoder.encode("retry: 2000\n\n"));
        detach = options.attach(subscriber);
      },
      cancel: () => finish("client"),
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );

  return new Response(body, {
    headers: {
      "content-type": options.contentType,
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}
