import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { configEtagOf, createSnapshot } from "../../src/store/snapshot.js";
import { canonicalJson } from "../../src/model/json.js";
import type { EnvironmentConfig, FlagDefinition } from "../../src/model/types.js";

const flag = (i: number): FlagDefinition => ({
  state: "ENABLED",
  variants: { on: true, off: false },
  defaultVariant: i % 2 ? "on" : "off",
  metadata: { i },
});

function config(count: number, extra: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  const flags: Record<string, FlagDefinition> = {};
  // Written out of order: the ETag does not depend on the order of the file.
  for (let i = count - 1; i >= 0; i--) flags[`flag-${i}`] = flag(i);
  return { name: "dev", metadata: { team: "web" }, segments: { beta: { "==": [1, 1] } }, flags, notifications: [], files: [], ...extra };
}

const sha256 = (text: string) => createHash("sha256").update(text);

/** A record's entries as `"key":"hash"`, in key order: each value's hash is that of its canonical JSON. */
const entryHashes = (record: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, sha256(canonicalJson(record[key])).digest("base64url")]),
  );

/** The ETag's definition, written out: the hash of the metadata, invalid flags and every flag and segment entry's hash. */
const expected = (c: EnvironmentConfig) =>
  `"${sha256(
    JSON.stringify({
      flags: entryHashes(c.flags),
      ...(c.invalidFlags && { invalidFlags: JSON.parse(canonicalJson(c.invalidFlags)) as unknown }),
      metadata: JSON.parse(canonicalJson(c.metadata)) as unknown,
      segments: entryHashes(c.segments),
    }),
  )
    .digest("base64url")
    .slice(0, 27)}"`;

describe("the configuration ETag", () => {
  it("is the hash of the metadata, invalid flags, and each flag and segment entry's key and hash, in key order", () => {
    for (const c of [config(0), config(1), config(2500), config(3, { invalidFlags: { "flag-9": "broken" } })])
      expect(configEtagOf(c)).toBe(expected(c));
  });

  it("does not depend on the order of entries, and changes with any one entry's key or value", () => {
    const c = config(50);
    const reversed = { ...c, flags: Object.fromEntries(Object.entries(c.flags).reverse()) };
    expect(configEtagOf(reversed)).toBe(configEtagOf(c));
    const renamed = { ...c, flags: { ...c.flags, "flag-50": c.flags["flag-7"]! } };
    Reflect.deleteProperty(renamed.flags, "flag-7");
    const edited = { ...c, flags: { ...c.flags, "flag-7": { ...c.flags["flag-7"]!, defaultVariant: "off" } } };
    const segment = { ...c, segments: { beta: { "==": [1, 2] } } };
    const etags = new Set([c, renamed, edited, segment].map(configEtagOf));
    expect(etags.size).toBe(4);
  });

  it("is made once per configuration: a snapshot of the same configuration finds it made", () => {
    const c = config(50);
    expect(configEtagOf(c)).toBe(expected(c));
    expect(createSnapshot(c, new Map(), "key").configEtag).toBe(expected(c));
  });
});
