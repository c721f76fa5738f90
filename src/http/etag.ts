/** Entity tags for evaluate-all and RFC 9110 `If-None-Match` matching. */
import { hash } from "node:crypto";

/**
 * Strong and deterministic: a hash of the environment's configuration version and the exact
 * response body, so it changes when either does and agrees across replicas reading the same files.
 * It hashes `bulkEtagPrefix(configEtag)` followed by the body's UTF-8 bytes, which bulk.ts writes
 * into one buffer (the body is built as bytes).
 */
export const bulkEtagPrefix = (configEtag: string): string => `${configEtag}\n`;

/** The ETag of `bulkEtagPrefix(configEtag)` and the body, as one run of bytes. */
export const bulkEtagOf = (prefixedBody: Uint8Array): string => `"${hash("sha256", prefixedBody, "base64url").slice(0, 27)}"`;

/** The opaque part of an entity-tag, without `W/` and quotes (unquoted tags are tolerated). */
const opaque = (tag: string): string => tag.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1");

/**
 * Weak comparison (RFC 9110 §13.1.2): `*` or any listed tag whose opaque part equals the
 * current one. `If-None-Match` uses weak comparison even though our tags are strong.
 */
export function ifNoneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header === etag) return true; // the common case: a client sending back the tag it got
  if (header.trim() === "*") return true;
  const current = opaque(etag);
  return (header.match(/(?:W\/)?"[^"]*"|[^\s,]+/g) ?? []).some((tag) => opaque(tag) === current);
}

/** True when `flagConfigEtag` (from an SSE-triggered re-fetch) names this configuration. */
export const sameConfigEtag = (presented: string, configEtag: string): boolean => opaque(presented) === opaque(configEtag);
