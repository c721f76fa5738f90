/** The content hash of a definition: what the ETag and the diff compare. */
import { createHash } from "node:crypto";
import { canonicalJson } from "../model/json.js";

const hashes = new WeakMap<object, string>();

/**
 * The SHA-256 (base64url) of a value's canonical JSON: equal data, equal hash, whatever the key
 * order. Remembered per object: a reload reuses unchanged definitions from the last one
 * (config/memo.ts), so an edit hashes what it changed.
 */
export function contentHash(value: unknown): string {
  if (typeof value !== "object" || value === null) return sha256(canonicalJson(value));
  let hash = hashes.get(value);
  if (hash === undefined) hashes.set(value, (hash = sha256(canonicalJson(value))));
  return hash;
}

export const sha256 = (text: string): string => createHash("sha256").update(text).digest("base64url");
