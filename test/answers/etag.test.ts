/** If-None-Match and flagConfigEtag matching, and the evaluate-all ETag's input: tables of cases. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bulkEtagOf, ifNoneMatchHits, partDigest, PART_DIGEST_BYTES, sameConfigEtag } from "../../src/answers/etag.js";

const ETAG = '"abc123"';

/** [what, If-None-Match header (null: none), whether it matches ETAG]. */
const ifNoneMatch: [string, string | null, boolean][] = [
  ["no header", null, false],
  ["the tag itself", ETAG, true],
  ["the tag as a weak tag", `W/${ETAG}`, true],
  ["the tag among others", `"other", ${ETAG}`, true],
  ["the weak tag among others, no spaces", `"other",W/${ETAG}`, true],
  ["a wildcard", "*", true],
  ["a wildcard with spaces", "  * ", true],
  ["the tag unquoted (tolerated)", "abc123", true],
  ["another tag", '"abc1234"', false],
  ["a prefix of the tag", '"abc12"', false],
  ["an empty header", "", false],
  ["an empty tag", '""', false],
  ["the tag with different case", '"ABC123"', false],
];

describe("ifNoneMatchHits", () => {
  it.each(ifNoneMatch)("%s", (_what, header, expected) => {
    expect(ifNoneMatchHits(header, ETAG)).toBe(expected);
  });
});

/** [what, flagConfigEtag presented, whether it names the configuration "v1"]. */
const configEtags: [string, string, boolean][] = [
  ["the same, quoted", '"v1"', true],
  ["the same, unquoted", "v1", true],
  ["the same, weak", 'W/"v1"', true],
  ["another version", '"v2"', false],
  ["empty", "", false],
];

describe("sameConfigEtag", () => {
  it.each(configEtags)("%s", (_what, presented, expected) => {
    expect(sameConfigEtag(presented, '"v1"')).toBe(expected);
  });
});

describe("bulkEtagOf and partDigest", () => {
  const sha = (data: Uint8Array) => createHash("sha256").update(data).digest();

  it("hashes the part digests then the version, as the module comment says", () => {
    const parts = ['{"key":"a"}', '{"key":"b"}'].map((p) => Buffer.from(p));
    const tail = Buffer.from('],"metadata":{}}');
    const input = Buffer.concat([partDigest(tail), ...parts.map(partDigest), Buffer.from('"v1"')]);
    expect(partDigest(parts[0]!)).toEqual(sha(parts[0]!).subarray(0, PART_DIGEST_BYTES));
    expect(bulkEtagOf(input)).toBe(`"${sha(input).toString("base64url").slice(0, 27)}"`);
  });

  it("changes with any part, their order, or the version", () => {
    const d = (text: string) => partDigest(Buffer.from(text));
    const tags = [
      [d("t"), d("a"), d("b"), Buffer.from("v1")],
      [d("t"), d("b"), d("a"), Buffer.from("v1")],
      [d("t"), d("a"), d("c"), Buffer.from("v1")],
      [d("t"), d("a"), d("b"), Buffer.from("v2")],
      [d("u"), d("a"), d("b"), Buffer.from("v1")],
    ].map((pieces) => bulkEtagOf(Buffer.concat(pieces)));
    expect(new Set(tags).size).toBe(tags.length);
  });
});
