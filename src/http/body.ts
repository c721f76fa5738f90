/** Request bodies: JSON whatever the Content-Type (curl users forget it), with a byte limit. */
import type { H3Event } from "h3";
import { apiError } from "./errors.js";

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads the body as JSON, rejecting more than `limit` bytes with 413. It stops reading without
 * cancelling the request stream: cancelling destroys the socket, which crashes listhen's
 * connection tracking (h3's own bodyLimit() does cancel).
 */
export async function readJsonBody(event: H3Event, limit: number, key?: string): Promise<unknown> {
  const tooLarge = () =>
    apiError(413, "PAYLOAD_TOO_LARGE", `request body exceeds ${limit} bytes`, { headers: { connection: "close" } });
  const declared = event.req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge();
  if (!event.req.body) return undefined;
  const reader = event.req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.releaseLock();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw apiError(400, "INVALID_CONTEXT", `request body is not valid JSON: ${(error as Error).message}`, { key });
  }
}
