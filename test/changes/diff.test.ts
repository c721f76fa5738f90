import { describe, expect, it } from "vitest";
import { diffEnvironments, type Version } from "../../src/changes/diff.js";
import type { FlagDefinition } from "../../src/model/types.js";

const flag = (overrides: Partial<FlagDefinition> = {}): FlagDefinition => ({
  state: "ENABLED",
  variants: { on: true, off: false },
  defaultVariant: "off",
  metadata: {},
  ...overrides,
});

const version = (config: Partial<Version["config"]> = {}, apiKey = "key-1"): Version => ({
  config: { flags: {}, segments: {}, metadata: {}, ...config },
  apiKey,
});

const summary = (before: Version | undefined, after: Version | undefined) =>
  diffEnvironments(before, after).map((c) => (c.kind === "api-key" ? "api-key" : `${c.kind}:${c.key}:${c.change}`));

describe("diffEnvironments", () => {
  it("finds nothing between equal versions, whatever the key order", () => {
    const a = version({
      flags: { x: flag(), y: flag({ targeting: { if: [{ var: "a" }, "on", null] } }) },
      segments: { s: { "==": [1, 1] } },
    });
    const b = version({
      segments: { s: { "==": [1, 1] } },
      flags: {
        y: {
          targeting: { if: [{ var: "a" }, "on", null] },
          metadata: {},
          defaultVariant: "off",
          variants: { off: false, on: true },
          state: "ENABLED",
        },
        x: flag(),
      },
    });
    expect(summary(a, b)).toEqual([]);
  });

  it("reports each created, updated and deleted flag once, in key order", () => {
    const a = version({ flags: { keep: flag(), change: flag(), gone: flag() } });
    const b = version({ flags: { keep: flag(), change: flag({ defaultVariant: "on" }), added: flag() } });
    expect(summary(a, b)).toEqual(["flag:added:created", "flag:change:updated", "flag:gone:deleted"]);
  });

  it("keeps before and after on each change", () => {
    const [change] = diffEnvironments(version({ flags: { f: flag() } }), version({ flags: { f: flag({ state: "DISABLED" }) } }));
    expect(change).toMatchObject({ kind: "flag", key: "f", before: { state: "ENABLED" }, after: { state: "DISABLED" } });
  });

  it.each([
    ["state", { state: "DISABLED" as const }],
    ["a variant value", { variants: { on: "yes", off: false } as FlagDefinition["variants"] }],
    ["targeting", { targeting: { if: [true, "on", null] } }],
    ["flag metadata", { metadata: { owner: "me" } }],
  ])("sees a change of %s", (_what, overrides) => {
    expect(summary(version({ flags: { f: flag() } }), version({ flags: { f: flag(overrides) } }))).toEqual(["flag:f:updated"]);
  });

  it("treats a flag-set metadata change as a change of every flag it reaches", () => {
    const a = version({ flags: { f: flag(), g: flag({ metadata: { team: "own" } }) }, metadata: { team: "web" } });
    const b = version({ flags: { f: flag(), g: flag({ metadata: { team: "own" } }) }, metadata: { team: "api" } });
    expect(summary(a, b)).toEqual(["flag:f:updated"]);
  });

  it("reports segments and key rotation", () => {
    const a = version({ segments: { s: { "==": [1, 1] }, t: true } }, "k1");
    const b = version({ segments: { s: { "==": [1, 2] }, u: true } }, "k2");
    expect(summary(a, b)).toEqual(["segment:s:updated", "segment:t:deleted", "segment:u:created", "api-key"]);
  });

  it("treats an environment appearing or going away as all created or all deleted", () => {
    const v = version({ flags: { f: flag() }, segments: { s: true } });
    expect(summary(undefined, v)).toEqual(["flag:f:created", "segment:s:created"]);
    expect(summary(v, undefined)).toEqual(["flag:f:deleted", "segment:s:deleted"]);
  });
});

describe("comparing definitions", () => {
  it("by content: equal definitions that are other objects, in another key order, are no change", () => {
    const copied = { variants: { off: false, on: true }, metadata: {}, defaultVariant: "off", state: "ENABLED" } as FlagDefinition;
    const before = version({ flags: { kept: flag(), copied: flag() }, segments: { s: { "==": [1, 1] } } });
    const after = version({ flags: { kept: before.config.flags.kept!, copied }, segments: { s: { "==": [1, 1] } } });
    expect(summary(before, after)).toEqual([]);
    expect(summary(after, version({ flags: { kept: flag(), copied: flag({ targeting: { if: [true, "on", "off"] } }) } }))).toEqual([
      "flag:copied:updated",
      "segment:s:deleted",
    ]);
  });
});
