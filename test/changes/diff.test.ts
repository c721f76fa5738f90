import { describe, expect, it } from "vitest";
import { compareEnvironmentsSteps, diffEnvironments, diffEnvironmentsSteps, type Version } from "../../src/changes/diff.js";
import { runSteps } from "../../src/model/steps.js";
import { recordEdit } from "../../src/model/edits.js";
import type { FlagDefinition } from "../../src/model/types.js";
import { ITEMS_PER_YIELD } from "../../src/model/steps.js";

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

describe("diffEnvironmentsSteps", () => {
  it("looks at ITEMS_PER_YIELD keys between yields, and finds what diffEnvironments finds", () => {
    const flags: Record<string, FlagDefinition> = {};
    for (let i = 0; i < 5000; i++) flags[`f${i}`] = flag();
    const before = version({ flags });
    const after = version({ flags: { ...flags, f7: flag({ defaultVariant: "on" }) } });
    const steps = diffEnvironmentsSteps(before, after);
    let yields = 0;
    let next = steps.next();
    while (!next.done) {
      yields++;
      next = steps.next();
    }
    // 10 000 keys (before's and after's), a yield every ITEMS_PER_YIELD.
    expect(yields).toBe(Math.floor(10_000 / ITEMS_PER_YIELD));
    expect(next.value).toEqual(diffEnvironments(before, after));
    expect(next.value.map((c) => (c.kind === "api-key" ? "api-key" : `${c.key}:${c.change}`))).toEqual(["f7:updated"]);
  });
});

describe("compareEnvironmentsSteps", () => {
  it("names every entry that is not the very object it was, changed or not, and no other", () => {
    const kept = flag();
    const segment = { "==": [1, 1] };
    const before = version({
      flags: { kept, edited: flag(), copied: flag(), gone: flag() },
      segments: { same: segment, moved: { "==": [2] } },
    });
    const after = version({
      flags: { kept, edited: flag({ defaultVariant: "on" }), copied: flag(), added: flag() },
      segments: { same: segment, moved: { "==": [2] } },
    });
    const { changes, replaced } = runSteps(compareEnvironmentsSteps(before, after));
    expect(changes.map((c) => (c.kind === "api-key" ? c.kind : `${c.kind}:${c.key}:${c.change}`))).toEqual([
      "flag:added:created",
      "flag:edited:updated",
      "flag:gone:deleted",
    ]);
    expect(replaced).toEqual({ flags: ["edited", "copied", "gone", "added"], segments: ["moved"] });
  });
});

describe("comparing an edit of a flag set (model/edits.ts)", () => {
  it("compares the replaced flags and reads no other", () => {
    const before = version({ flags: { a: flag(), b: flag(), c: flag() } });
    let reads = 0;
    const flags: Record<string, FlagDefinition> = {};
    Object.defineProperty(flags, "a", { enumerable: true, get: () => (reads++, before.config.flags.a) });
    Object.assign(flags, { b: flag(), c: flag({ defaultVariant: "on" }) });
    recordEdit(flags, before.config.flags, ["b", "c"]);
    const { changes, replaced } = runSteps(compareEnvironmentsSteps(before, version({ flags })));
    expect(changes.map((c) => (c.kind === "api-key" ? c.kind : `${c.kind}:${c.key}:${c.change}`))).toEqual(["flag:c:updated"]);
    expect(replaced.flags).toEqual(["b", "c"]);
    expect(reads).toBe(0);
    // New flag-set metadata changes what every flag answers: each is compared.
    const moved = runSteps(compareEnvironmentsSteps(before, version({ flags, metadata: { team: "web" } })));
    expect(moved.changes).toHaveLength(3);
    expect(reads).toBeGreaterThan(0);
  });
});
