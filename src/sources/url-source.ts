/**
 * The URL source: one YAML or JSON document over HTTP(S), polled (flagd's HTTP sync) with a
 * conditional GET, so an unchanged document costs a 304 and no reload. A read hands over the latest
 * poll's outcome: the document, or the problem as a broken file's, named by the URL. The outcome
 * changes (and a reload follows) only when the content or the problem does: a failing URL is logged
 * once per distinct problem, not once per poll.
 */
import { basename, extname } from "node:path";
import type { Logger } from "../log/logger.js";
import { decodeUtf8, type Decoded } from "./decode.js";
import { MAX_FILE_BYTES, sizeText } from "./files.js";
import type { InputSet } from "./inputs.js";
import { networkReason } from "./network-reason.js";
import type { ConfigSource, SourceDocument, SourceListener, SourceLoad } from "./source.js";

/** flagd's HTTP sync default. */
const DEFAULT_POLL_INTERVAL_MS = 5_000;
const DEFAULT_FETCH_TIMEOUT_MS = 10_000;

export interface UrlSourceOptions {
  /** Between the end of one poll and the start of the next. */
  pollIntervalMs?: number;
  /** A request with no complete response by then is a problem. */
  timeoutMs?: number;
  maxBytes?: number;
  /** Told when a failing URL answers again. */
  logger?: Pick<Logger, "info">;
}

/** `https://host/flags/development.yaml?x` -> `development`; "" when there is none (fetching says why). */
export function urlStem(url: string): string {
  try {
    const name = basename(decodeURIComponent(new URL(url).pathname));
    return basename(name, extname(name));
  } catch {
    return "";
  }
}

/** What one request gave: a document (on a 304, the one we had), or a problem. */
type Fetched = { text: string; etag?: string; lastModified?: string; finalUrl?: string } | { error: string; line?: number; col?: number };

export class UrlSource implements ConfigSource {
  readonly kind = "url";
  readonly #options: Required<Omit<UrlSourceOptions, "logger">> & UrlSourceOptions;
  #current: SourceDocument | undefined;
  #lastGood: Extract<Fetched, { text: string }> | undefined;
  /** Bumped whenever `#current` changes: what the inputs of a read compare. */
  #version = 0;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: AbortController | undefined;
  #closed = false;

  constructor(
    readonly id: string,
    options: UrlSourceOptions = {},
  ) {
    this.#options = { pollIntervalMs: DEFAULT_POLL_INTERVAL_MS, timeoutMs: DEFAULT_FETCH_TIMEOUT_MS, maxBytes: MAX_FILE_BYTES, ...options };
  }

  /** The latest poll's outcome; the first read fetches. */
  async read(inputs?: InputSet): Promise<SourceLoad> {
    if (this.#current === undefined) await this.poll();
    const version = this.#version;
    inputs?.add({ id: this.id, changed: async () => this.#version !== version });
    const document = this.#current ?? { file: this.id, error: "not fetched" };
    return { id: this.id, documents: [{ stem: urlStem(this.id), document }], environments: [], problems: [] };
  }

  /** Fetches once and takes the outcome; true when it changed what a read hands over. */
  async poll(): Promise<boolean> {
    const fetched = await this.#fetch();
    if (this.#closed) return false;
    const before = this.#current;
    if ("error" in fetched) {
      if (before && "error" in before && before.error === fetched.error) return false;
      this.#current = { file: this.id, ...fetched };
    } else {
      this.#lastGood = fetched;
      const { text, finalUrl } = fetched;
      if (before && "error" in before) this.#options.logger?.info(`${this.id}: fetched again (was: ${before.error})`, { url: this.id });
      const beforeFinal = before && "text" in before ? before.finalUrl : undefined;
      if (finalUrl !== beforeFinal && finalUrl !== undefined)
        this.#options.logger?.info(`${this.id}: redirected: the document is read from ${finalUrl}`, { url: this.id, finalUrl });
      if (before && "text" in before && before.text === text && beforeFinal === finalUrl) return false;
      this.#current = { file: this.id, text, ...(finalUrl !== undefined && { finalUrl }) };
    }
    this.#version++;
    return true;
  }

  async watch(listener: SourceListener): Promise<void> {
    const next = () => {
      if (this.#closed) return;
      this.#timer = setTimeout(async () => {
        const changed = await this.poll().catch((error: Error) => listener.error(error));
        if (changed && !this.#closed) listener.changed();
        next();
      }, this.#options.pollIntervalMs).unref();
    };
    next();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#inFlight?.abort();
  }

  /** One conditional GET, bounded in time and size. */
  async #fetch(): Promise<Fetched> {
    const headers: Record<string, string> = { accept: "application/yaml, application/json;q=0.9, */*;q=0.5" };
    // Conditional only when a 304 has something to keep.
    if (this.#lastGood?.etag) headers["if-none-match"] = this.#lastGood.etag;
    if (this.#lastGood?.lastModified) headers["if-modified-since"] = this.#lastGood.lastModified;
    const abort = new AbortController();
    this.#inFlight = abort;
    const timer = setTimeout(() => abort.abort(new Error("timeout")), this.#options.timeoutMs);
    try {
      const response = await fetch(this.id, { headers, signal: abort.signal, redirect: "follow" });
      const finalUrl = response.redirected && response.url !== this.id ? response.url : undefined;
      // The document we have, still; perhaps now answered from another address.
      if (response.status === 304 && this.#lastGood) return { ...this.#lastGood, finalUrl };
      if (!response.ok) {
        void response.body?.cancel().catch(() => {});
        return { error: `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}` };
      }
      const body = await readCapped(response, this.#options.maxBytes);
      if ("error" in body) return body;
      return {
        text: body.text,
        etag: response.headers.get("etag") ?? undefined,
        lastModified: response.headers.get("last-modified") ?? undefined,
        finalUrl,
      };
    } catch (error) {
      if (abort.signal.aborted) return { error: `no complete response within ${this.#options.timeoutMs / 1000} s` };
      return { error: `cannot fetch: ${networkReason(error)}` };
    } finally {
      clearTimeout(timer);
      if (this.#inFlight === abort) this.#inFlight = undefined;
    }
  }
}

/** The body decoded, unless it is larger than `maxBytes` (then read no further). */
async function readCapped(response: Response, maxBytes: number): Promise<Decoded | { error: string }> {
  const tooLarge = { error: `document is larger than ${sizeText(maxBytes)}` };
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) {
    void response.body?.cancel().catch(() => {});
    return tooLarge;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body ?? []) {
    total += chunk.byteLength;
    if (total > maxBytes) return tooLarge; // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return decodeUtf8(Buffer.concat(chunks));
}
