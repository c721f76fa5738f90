import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { configEtagOf, configEtagSteps, createSnapshot } from "../../src/store/snapshot.js";
import { ITEMS_PER_YIELD } from "../../src/model/steps.js";
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

/** The sum (mod 2^256) of the hashes of a record's entries, `"key":` and the value's canonical JSON, as 64 hex digits. */
function entriesSum(record: Record<string, unknown>): string {
  let sum = 0n;
  for (const [key, value] of Object.entries(record))
    sum += BigInt(`0x${sha256(`${JSON.stringify(key)}:${canonicalJson(value)}`).digest("hex")}`);
  return (sum % 2n ** 256n).toString(16).padStart(64, "0");
}

/** The ETag's definition, written out: the hash of the metadata, invalid flags and the sums of flag and segment entries. */
const expected = (c: EnvironmentConfig) =>
  `"${sha256(
    JSON.stringify({
      flags: entriesSum(c.flags),
      ...(c.invalidFlags && { invalidFlags: JSON.parse(canonicalJson(c.invalidFlags)) as unknown }),
      metadata: JSON.parse(canonicalJson(c.metadata)) as unknown,
      segments: entriesSum(c.segments),
    }),
  )
    .digest("base64url")
    .slice(0, 27)}"`;

/** Runs a generator of steps to its end, counting its yields. */
function steps(run: Generator<void, string, void>): { yields: number; etag: string } {
  let yields = 0;
  let next = run.next();
  while (!next.done) {
    yields++;
    next = run.next();
  }
  return { yields, etag: next.value };
}

describe("the configuration ETag", () => {
  it("is the hash of the metadata, invalid flags, and the sums of the flag and segment entries' hashes", () => {
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

  it("is made in steps (a few entries hashed each), once per configuration", () => {
    // An entry hashed counts as 21 entries between two yields.
    const hashedPerYield = Math.ceil(ITEMS_PER_YIELD / 21);
    const c = config(5000);
    expect(steps(configEtagSteps(c))).toEqual({ yields: Math.floor(5000 / hashedPerYield), etag: expected(c) });
    // Made: a snapshot of the same configuration, and a second run, find it without a step.
    expect(configEtagSteps(c).next()).toEqual({ done: true, value: expected(c) });
    expect(createSnapshot(c, new Map(), "key").configEtag).toBe(expected(c));
  });

  it("after an edit, is updated from the last ETag's sums with the replaced entries alone", () => {
    const c = config(5000);
    configEtagOf(c);
    // Flag 7 edited, flag 8 removed, flag 5000 added, a segment changed; flag 9 replaced by an equal object.
    const flags = { ...c.flags, "flag-7": { ...c.flags["flag-7"]!, defaultVariant: "on" }, "flag-9": { ...c.flags["flag-9"]! } };
    Reflect.deleteProperty(flags, "flag-8");
    const edited = { ...c, flags: { ...flags, "flag-5000": flag(5000) }, segments: { beta: { "==": [1, 2] } } };
    const replaced = { flags: ["flag-7", "flag-8", "flag-9", "flag-5000"], segments: ["beta"] };
    // Five entries hashed out and in: a yield every few, not 5000 entries' worth.
    const update = steps(configEtagSteps(edited, { config: c, replaced }));
    expect(update.etag).toBe(expected(edited));
    expect(update.yields).toBeLessThanOrEqual(replaced.flags.length + replaced.segments.length);
    // And from that one, back to the first version's entries.
    expect(steps(configEtagSteps({ ...c }, { config: edited, replaced })).etag).toBe(expected(c));
  });

  it("from a base whose ETag was never made, hashes every entry", () => {
    const c = config(100);
    const edited = { ...c, flags: { ...c.flags, "flag-7": flag(8) } };
    expect(steps(configEtagSteps(edited, { config: c, replaced: { flags: ["flag-7"], segments: [] } })).etag).toBe(expected(edited));
  });
});
