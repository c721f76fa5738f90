/** Request bodies: JSON whatever the Content-Type (curl users forget it), with a byte limit. */
import type { Readable } from "node:stream";
import type { H3Event } from "h3";
import { apiError } from "../evaluation/problem.js";
import { parseJsonBody } from "../evaluation/context.js";
import { withHttpErrors } from "./errors.js";

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Collects a Node request's bytes up to `limit`, then calls `done` once: with the text, or with
 * the 413 (having stopped reading, without destroying the socket). A request whose client goes
 * away before its end never calls `done`: there is no one to answer, and nothing is held (the
 * listeners go with the request). Node emits "error" on a request only when it has a listener,
 * so none is added. Callbacks, not a promise: the Node fast path reads every body here.
 */
function collectNodeBody(req: Readable, limit: number, done: (error: unknown, text?: string) => void): void {
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  req.on("data", (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > limit) {
      settled = true;
      req.pause();
      return done(tooLarge(limit));
    }
    if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
  });
  req.on("end", () => settled || done(null, chunks ? Buffer.concat(chunks).toString("utf8") : (first?.toString("utf8") ?? "")));
}

/** The same through the web stream, where there is no Node request (`app.request()`). */
async function readWebBody(body: ReadableStream<Uint8Array>, limit: number): Promise<Buffer | "too-large"> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > limit) {
      reader.releaseLock();
      return "too-large";
    }
    chunks.push(value);
  }
}

/** The 413 answer; the connection closes after it, so the unread rest of the body goes with it. */
const tooLarge = (limit: number) =>
  apiError(413, "PAYLOAD_TOO_LARGE", `request body exceeds ${limit} bytes`, { headers: { connection: "close" } });

/**
 * A Node request's body as text, rejecting more than `limit` bytes with 413 (a declared
 * Content-Length over it before reading anything). On overflow it stops reading but never
 * cancels or destroys the request: a destroyed socket crashes listhen's connection tracking
 * (h3's own bodyLimit() does that). The h3 routes and the fast path both read bodies here.
 * The promise of a request whose client leaves before its end never settles (nothing waits on it).
 */
export function readNodeBodyText(req: Readable, declaredLength: string | null | undefined, limit: number): Promise<string> {
  return new Promise((resolve, reject) =>
    readNodeBodyWith(req, declaredLength, limit, (error, text) => (error ? reject(error) : resolve(text!))),
  );
}

/** `readNodeBodyText` with a callback: the error (a 413 ApiError among them) or the text. */
export function readNodeBodyWith(
  req: Readable,
  declaredLength: string | null | undefined,
  limit: number,
  done: (error: unknown, text?: string) => void,
): void {
  if (declaredLength != null && Number(declaredLength) > limit) return done(tooLarge(limit));
  collectNodeBody(req, limit, done);
}

/**
 * `readNodeBodyText` for an h3 event. Under Node the raw request is read directly, which avoids
 * building a web stream for every request; without one (`app.request()`), the web stream.
 */
export const readBodyText = (event: H3Event, limit: number): Promise<string> => withHttpErrors(() => readEventBody(event, limit));

async function readEventBody(event: H3Event, limit: number): Promise<string> {
  const declared = event.req.headers.get("content-length");
  const nodeReq = event.runtime?.node?.req;
  if (nodeReq) return readNodeBodyText(nodeReq, declared, limit);
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  const bytes = event.req.body ? await readWebBody(event.req.body, limit) : Buffer.alloc(0);
  if (bytes === "too-large") throw tooLarge(limit);
  return bytes.toString("utf8");
}

/** `readBodyText` then `parseJsonBody`. */
export const readJsonBody = async (event: H3Event, limit: number, key?: string): Promise<unknown> => {
  const text = await readBodyText(event, limit);
  return withHttpErrors(() => parseJsonBody(text, key));
};
