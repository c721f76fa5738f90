import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { configEtagOf, configEtagSteps, createSnapshot } from "../../src/store/snapshot.js";
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

/** The ETag's definition: the hash of the canonical JSON of what the files say. */
const expected = (c: EnvironmentConfig) =>
  `"${createHash("sha256")
    .update(
      canonicalJson({
        flags: c.flags,
        ...(c.invalidFlags && { invalidFlags: c.invalidFlags }),
        metadata: c.metadata,
        segments: c.segments,
      }),
    )
    .digest("base64url")
    .slice(0, 27)}"`;

describe("the configuration ETag", () => {
  it("is the hash of the canonical JSON of flags, invalid flags, metadata and segments", () => {
    for (const c of [config(0), config(1), config(2500), config(3, { invalidFlags: { "flag-9": "broken" } })])
      expect(configEtagOf(c)).toBe(expected(c));
  });

  it("is made in steps of a thousand entries, once per configuration", () => {
    const c = config(5000);
    const steps = configEtagSteps(c);
    let yields = 0;
    let next = steps.next();
    while (!next.done) {
      yields++;
      next = steps.next();
    }
    expect(yields).toBe(5);
    expect(next.value).toBe(expected(c));
    // Made: a snapshot of the same configuration, and a second run, find it without a step.
    expect(configEtagSteps(c).next()).toEqual({ done: true, value: expected(c) });
    expect(createSnapshot(c, new Map(), "key").configEtag).toBe(expected(c));
  });
});
