import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Change } from "../../src/model/change.js";
import type { FlagDefinition } from "../../src/model/types.js";
import { NOTIFICATION_EVENTS, describeChange, formatValue } from "../../src/notify/summary.js";

const flag = (overrides: Partial<FlagDefinition> = {}): FlagDefinition => ({
  state: "ENABLED",
  variants: { on: true, off: false },
  defaultVariant: "off",
  metadata: {},
  ...overrides,
});

const updated = (before: FlagDefinition, after: FlagDefinition): Change => ({ kind: "flag", key: "f", change: "updated", before, after });

describe("describeChange", () => {
  it("names state and defaultVariant before -> after", () => {
    expect(describeChange(updated(flag(), flag({ state: "DISABLED", defaultVariant: "on" })))).toEqual({
      event: "flag-updated",
      kind: "flag",
      key: "f",
      change: "updated",
      subject: "flag f",
      details: ["state: ENABLED -> DISABLED", "defaultVariant: off -> on"],
    });
  });

  it("lists variants added, removed and changed, values as JSON", () => {
    const before = flag({ variants: { on: true, off: false, gone: "x" } });
    const after = flag({ variants: { on: false, off: false, blue: "#1f6feb" } });
    expect(describeChange(updated(before, after)).details).toEqual([
      "variant on: true -> false",
      "variant gone removed",
      'variant blue added: "#1f6feb"',
    ]);
  });

  it("shortens long values and shows a null defaultVariant", () => {
    expect(formatValue("x".repeat(100))).toBe(`"${"x".repeat(38)}…`);
    expect(formatValue({ a: [1, 2] })).toBe('{"a":[1,2]}');
    expect(describeChange(updated(flag(), flag({ defaultVariant: null }))).details).toEqual(["defaultVariant: off -> null"]);
  });

  it("says targeting added, removed or changed, treating {} as none", () => {
    const rule = (v: string) => ({ if: [{ "==": [{ var: "plan" }, v] }, "on", null] });
    expect(describeChange(updated(flag({ targeting: {} }), flag({ targeting: rule("a") }))).details).toEqual(["targeting added"]);
    expect(describeChange(updated(flag({ targeting: rule("a") }), flag())).details).toEqual(["targeting removed"]);
    expect(describeChange(updated(flag({ targeting: rule("a") }), flag({ targeting: rule("b") }))).details).toEqual(["targeting changed"]);
  });

  it("says metadata changed, also when only the merged flag-set metadata differs", () => {
    expect(describeChange(updated(flag(), flag({ metadata: { owner: "web" } }))).details).toEqual(["metadata changed"]);
    expect(describeChange(updated(flag(), flag())).details).toEqual(["metadata changed"]);
  });

  it("describes a created flag by what it serves, a deleted one by nothing more", () => {
    expect(
      describeChange({ kind: "flag", key: "n", change: "created", after: flag({ state: "DISABLED", targeting: { var: "x" } }) }),
    ).toEqual({
      event: "flag-created",
      kind: "flag",
      key: "n",
      change: "created",
      subject: "flag n",
      details: ["variants: on, off", "defaultVariant: off", "state: DISABLED", "targeting added"],
    });
    expect(describeChange({ kind: "flag", key: "n", change: "deleted", before: flag() })).toMatchObject({
      event: "flag-deleted",
      details: [],
    });
  });

  it("describes segments by their rule", () => {
    expect(describeChange({ kind: "segment", key: "beta", change: "updated", before: { "==": [1, 1] }, after: { "==": [1, 2] } })).toEqual({
      event: "segment-updated",
      kind: "segment",
      key: "beta",
      change: "updated",
      subject: "segment beta",
      details: ["rule changed"],
    });
    expect(describeChange({ kind: "segment", key: "beta", change: "created", after: true })).toMatchObject({
      event: "segment-created",
      details: [],
    });
    expect(describeChange({ kind: "segment", key: "beta", change: "deleted", before: true })).toMatchObject({
      event: "segment-deleted",
      details: [],
    });
  });

  it("announces a key rotation without any key", () => {
    expect(describeChange({ kind: "api-key", change: "updated" })).toEqual({
      event: "api-key-rotated",
      kind: "api-key",
      key: null,
      change: "rotated",
      subject: "API key",
      details: [],
    });
  });
});

describe("NOTIFICATION_EVENTS", () => {
  it("are exactly the names the schema allows in `events:`", () => {
    const schema = JSON.parse(readFileSync(new URL("../../schema/flagserve.schema.json", import.meta.url), "utf8"));
    expect([...NOTIFICATION_EVENTS]).toEqual(schema.definitions.notification.properties.events.items.enum);
  });
});
