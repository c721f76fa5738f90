/**
 * The messages of one flagd stream that its client has not taken yet, counted in bytes. Connect
 * pulls the next message only once the last one is written out (its `drain`), so what a client
 * that stops reading leaves behind waits here, plus the one message in flight: `backlog` is both,
 * which is what the stream's bound is checked against before each new message (as an SSE
 * stream's backlog is, src/events/sse.ts).
 */
import type { ConnectError } from "@connectrpc/connect";

export class Outbox<T> {
  #queue: { message: T; bytes: number }[] = [];
  #queued = 0;
  #inFlight = 0;
  /** undefined: open; null: ended; an error: ended with it. */
  #end: ConnectError | null | undefined;
  #wake: (() => void) | undefined;

  /** Bytes written to the stream and not taken by its client. */
  get backlog(): number {
    return this.#queued + this.#inFlight;
  }

  push(message: T, bytes: number): void {
    if (this.#end !== undefined) return;
    this.#queue.push({ message, bytes });
    this.#queued += bytes;
    this.#wakeUp();
  }

  /** Ends the stream: what is queued is dropped; `error` (if any) is the call's status. */
  end(error: ConnectError | null): void {
    if (this.#end !== undefined) return;
    this.#end = error;
    this.#queue = [];
    this.#queued = 0;
    this.#wakeUp();
  }

  /** The messages as the stream's handler yields them, until the end. */
  async *messages(): AsyncGenerator<T> {
    for (;;) {
      const next = this.#end === undefined ? this.#queue.shift() : undefined;
      if (next) {
        this.#queued -= next.bytes;
        this.#inFlight = next.bytes;
        yield next.message; // resumes once written out
        this.#inFlight = 0;
        continue;
      }
      if (this.#end) throw this.#end;
      if (this.#end === null) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
