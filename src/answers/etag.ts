/** Entity tags for evaluate-all and RFC 9110 `If-None-Match` matching. */
import { hash } from "node:crypto";

/**
 * Strong and deterministic: a hash of the environment's configuration version and the exact
 * response body, so it changes when either does and agrees across replicas reading the same files.
 *
 * An evaluate-all body is `{"flags":[`, its items (one JSON value each) joined by commas, then its
 * tail (everything after the flags array): the tail and the items, in order, make the body, and the
 * body gives them back. So the ETag hashes their digests rather than the body's bytes: SHA-256 over
 * the part digest (below) of the tail, then that of each item, then the configuration version
 * (`configEtag`) as UTF-8, base64url, first 27 characters. An item's digest is taken once per
 * outcome (bulk.ts), so an answer of 100 flags hashes about 1.7 KB instead of 8.
 */
export const PART_DIGEST_BYTES = 16;

/** A part of an evaluate-all body as the ETag hashes it: the first 16 bytes of its SHA-256. */
export const partDigest = (part: Uint8Array): Buffer => hash("sha256", part, "buffer").subarray(0, PART_DIGEST_BYTES);

/** The ETag of its input: the part digests, then the configuration version (see above). */
export const bulkEtagOf = (input: Uint8Array): string => `"${hash("sha256", input, "base64url").slice(0, 27)}"`;

/** The opaque part of an entity-tag, without `W/` and quotes (unquoted tags are tolerated). */
const opaque = (tag: string): string =>
  tag
    .trim()
    .replace(/^W\//, "")
    .replace(/^"(.*)"$/, "$1");

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
