/**
 * A Server-Sent Events parser (WHATWG HTML "event stream interpretation"): text in, messages
 * out. Lines end in CRLF, LF or CR; `data` lines are joined with "\n"; a block without data is
 * not dispatched; the last event id persists until the stream sets another.
 */

export interface SseMessage {
  /** `message` when the block had no `event:` line. */
  event: string;
  data: string;
  /** The last event id seen on the stream at dispatch ("" when none). */
  id: string;
}

export class SseParser {
  #buffer = "";
  #started = false;
  #event = "";
  #data: string[] = [];
  /** The stream's last event id: what to send as Last-Event-ID when reconnecting. */
  lastEventId = "";
  /** The reconnection time the server asked for, in ms, if it did. */
  retry: number | undefined;

  /** Feeds decoded text; returns the messages completed by it. */
  push(text: string): SseMessage[] {
    let buffer = this.#buffer + text;
    if (!this.#started && buffer.length > 0) {
      this.#started = true;
      if (buffer.startsWith("\uFEFF")) buffer = buffer.slice(1);
    }
    const messages: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      // A CR at the end of the text may be the first half of a CRLF: wait for more.
      if (c === "\r" && i === buffer.length - 1) break;
      const line = buffer.slice(start, i);
      if (c === "\r" && buffer[i + 1] === "\n") i++;
      start = i + 1;
      const message = this.#line(line);
      if (message) messages.push(message);
    }
    this.#buffer = buffer.slice(start);
    return messages;
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") {
      const data = this.#data;
      const event = this.#event || "message";
      this.#data = [];
      this.#event = "";
      return data.length > 0 ? { event, data: data.join("\n"), id: this.lastEventId } : undefined;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
    else if (field === "id" && !value.includes("\0")) this.lastEventId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return undefined;
  }
}
