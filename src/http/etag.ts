/** Entity tags for evaluate-all and RFC 9110 `If-None-Match` matching. */
import { hash } from "node:crypto";

/**
 * Strong and deterministic: a hash of the environment's configuration version and the exact
 * response body, so it changes when either does and agrees across replicas reading the same files.
 * (One-shot over the text: the same digest as hashing the parts in turn, without a Hash object.)
 */
export const bulkEtag = (configEtag: string, body: string): string =>
  `"${hash("sha256", `${configEtag}\n${body}`, "base64url").slice(0, 27)}"`;

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
