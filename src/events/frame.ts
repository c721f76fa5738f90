/**
 * SSE text encoded once for every client it goes to: a reload's events reach thousands of streams,
 * and converting the same string (and framing it) once per stream is most of what writing them
 * costs in JavaScript.
 */
const CRLF = Buffer.from("\r\n");

export class SseFrame {
  #bytes: Buffer | undefined;
  #chunk: Buffer | undefined;

  constructor(readonly text: string) {}

  /** The text as UTF-8, encoded on first use (a web stream encodes the text itself). */
  get bytes(): Buffer {
    this.#bytes ??= Buffer.from(this.text, "utf8");
    return this.#bytes;
  }

  /**
   * The same bytes as one HTTP/1.1 chunk (`<size in hex>\r\n<bytes>\r\n`): what node:http
   * writes for them on a response sent with `Transfer-Encoding: chunked`, built once.
   */
  get chunk(): Buffer {
    this.#chunk ??= Buffer.concat([Buffer.from(`${this.bytes.length.toString(16)}\r\n`, "latin1"), this.bytes, CRLF]);
    return this.#chunk;
  }
}
