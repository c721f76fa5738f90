/**
 * One environment's stream of events: ids, a bounded replay buffer, and the clients to write to.
 * Each event is encoded once here, as one SseFrame for every client (under Node, the same bytes go
 * to every socket; a web stream encodes the frame's text itself).
 */
import { encodeEvent } from "./encode.js";
import { SseFrame } from "./frame.js";

export interface Subscriber {
  /** Writes an already-encoded SSE frame; the subscriber drops itself if the client is too slow. */
  send(frame: SseFrame): void;
  close(): void;
  /** SHA-256 hex of the key the stream was opened with, so a revoked key can end its streams. */
  readonly keyDigest: string;
  readonly ip: string;
}

export interface BufferedEvent {
  id: number;
  text: string;
}

export class Channel {
  readonly subscribers = new Set<Subscriber>();
  #buffer: BufferedEvent[] = [];
  #lastId = 0;

  constructor(readonly replayLimit = 500) {}

  /** Epoch milliseconds, strictly increasing: a collision is bumped by one. */
  #nextId(): number {
    const now = Date.now();
    this.#lastId = now > this.#lastId ? now : this.#lastId + 1;
    return this.#lastId;
  }

  /** Assigns ids, buffers for replay, and writes all the events to every client in one chunk. */
  publish(events: readonly { name?: string; data: string }[]): void {
    if (events.length === 0) return;
    let chunk = "";
    for (const event of events) {
      const id = this.#nextId();
      const text = encodeEvent({ ...event, id });
      this.#buffer.push({ id, text });
      chunk += text;
    }
    if (this.#buffer.length > this.replayLimit) this.#buffer.splice(0, this.#buffer.length - this.replayLimit);
    this.broadcast(chunk);
  }

  /** Text that is not an event to replay (heartbeats); encoded once, here, for all clients. */
  broadcast(text: string): void {
    if (this.subscribers.size === 0) return;
    const frame = new SseFrame(text);
    for (const subscriber of this.subscribers) subscriber.send(frame);
  }

  /**
   * Adds a client. With `lastEventId` (a reconnect), first replays the buffered events newer
   * than it; a client further behind than the buffer reaches gets what is left.
   */
  subscribe(subscriber: Subscriber, lastEventId?: number): () => void {
    if (lastEventId !== undefined) {
      const missed = this.#buffer.filter((e) => e.id > lastEventId);
      if (missed.length > 0) subscriber.send(new SseFrame(missed.map((e) => e.text).join("")));
    }
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  closeWhere(predicate: (subscriber: Subscriber) => boolean): number {
    let closed = 0;
    for (const subscriber of [...this.subscribers]) {
      if (!predicate(subscriber)) continue;
      this.subscribers.delete(subscriber);
      subscriber.close();
      closed++;
    }
    return closed;
  }
}
