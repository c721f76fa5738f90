import { describe, expect, it } from "vitest";
import { contextAttributes } from "../../src/engine/context.js";
import { compileEnvironment } from "../../src/engine/compile.js";
import { evaluate, evaluatorFor } from "../../src/engine/evaluate.js";
import { isEvaluationError, type CompiledFlag } from "../../src/engine/types.js";
import { compileFlag, env, errorOf, reasonOf, run } from "./helpers.js";

const onOff = { on: true, off: false };

describe("reason table (docs/evaluation.md)", () => {
  it("DISABLED: reason DISABLED, no value or variant, metadata present", () => {
    const flag = compileFlag("f", {
      state: "DISABLED",
      variants: onOff,
      defaultVariant: "on",
      targeting: { fractional: [["on", 1]] }, // would fail without a key: must not even run
      metadata: { owner: "web" },
    });
    expect(run(flag, {})).toStrictEqual({ key: "f", reason: "DISABLED", metadata: { owner: "web" } });
  });

  it("no targeting + defaultVariant: STATIC", () => {
    const flag = compileFlag("f", { variants: onOff, defaultVariant: "on" });
    expect(run(flag, {})).toStrictEqual({ key: "f", reason: "STATIC", variant: "on", value: true, metadata: {} });
  });

  it("empty targeting {} counts as no targeting: STATIC", () => {
    const flag = compileFlag("f", { variants: onOff, defaultVariant: "off", targeting: {} });
    expect(flag.rule).toBeUndefined();
    expect(run(flag)).toMatchObject({ reason: "STATIC", variant: "off", value: false });
  });

  it("no targeting + null defaultVariant: DEFAULT with value and variant omitted", () => {
    const flag = compileFlag("f", { variants: onOff, defaultVariant: null });
    expect(run(flag, {})).toStrictEqual({ key: "f", reason: "DEFAULT", metadata: {} });
  });

  it("targeting returns null: DEFAULT with the defaultVariant", () => {
    const flag = compileFlag("targeting-key-flag", {
      variants: { hit: "hit", miss: "miss" },
      defaultVariant: "miss",
      targeting: { if: [{ "==": [{ var: "targetingKey" }, "5c3d8535-f81a-4478-a6d3-afaa4d51199e"] }, "hit", null] },
    });
    expect(run(flag, { targetingKey: "5c3d8535-f81a-4478-a6d3-afaa4d51199e" })).toMatchObject({
      variant: "hit",
      value: "hit",
      reason: "TARGETING_MATCH",
    });
    expect(run(flag, { targetingKey: "f20bd32d-703b-48b6-bc8e-79d53c85134a" })).toStrictEqual({
      key: "targeting-key-flag",
      reason: "DEFAULT",
      variant: "miss",
      value: "miss",
      metadata: {},
    });
  });

  it("targeting returns null and there is no defaultVariant: DEFAULT, value omitted", () => {
    const flag = compileFlag("f", {
      variants: { CEO: "CEO", CFO: "CFO" },
      defaultVariant: null,
      targeting: { if: [{ "==": [{ var: "email" }, "jobs@orange.com"] }, "CEO", null] },
    });
    expect(run(flag, { email: "wozniak@orange.com" })).toStrictEqual({ key: "f", reason: "DEFAULT", metadata: {} });
    expect(run(flag, { email: "jobs@orange.com" })).toMatchObject({ value: "CEO", reason: "TARGETING_MATCH" });
  });

  it("targeting returns undefined: treated like null", () => {
    const flag: CompiledFlag = {
      key: "f",
      state: "ENABLED",
      variants: onOff,
      defaultVariant: "off",
      rule: () => undefined,
      metadata: {},
    };
    expect(evaluate(flag, {})).toMatchObject({ reason: "DEFAULT", variant: "off" });
  });

  it("targeting returns a variant key: TARGETING_MATCH", () => {
    const flag = compileFlag("f", {
      variants: { INTERNAL: "INTERNAL", EXTERNAL: "EXTERNAL" },
      defaultVariant: "EXTERNAL",
      targeting: { if: [{ ends_with: [{ var: "email" }, "@corp.com"] }, "INTERNAL", "EXTERNAL"] },
    });
    expect(run(flag, { email: "a@corp.com" })).toStrictEqual({
      key: "f",
      reason: "TARGETING_MATCH",
      variant: "INTERNAL",
      value: "INTERNAL",
      metadata: {},
    });
    // The default variant returned by the rule is still a targeting match, not DEFAULT.
    expect(run(flag, { email: "a@x.com" })).toMatchObject({ variant: "EXTERNAL", reason: "TARGETING_MATCH" });
  });

  it.each([
    ["true", { "==": [1, { var: "n" }] }, { n: 1 }, "yes"],
    ["false", { "==": [2, { var: "n" }] }, { n: 1 }, "no"],
    ["1", { var: "n" }, { n: 1 }, "one"],
    ["0.5", { var: "n" }, { n: 0.5 }, "half"],
  ])("booleans and numbers name variants by their text: %s", (key, targeting, context, value) => {
    const flag = compileFlag("f", {
      variants: { true: "yes", false: "no", "1": "one", "0.5": "half" },
      targeting: targeting,
    });
    expect(run(flag, context)).toMatchObject({ variant: key, value, reason: "TARGETING_MATCH" });
  });

  it.each([
    ["an unknown variant name", { if: [true, "three", null] }],
    ['true without a "true" variant', { "==": [1, 1] }],
    ["a number without such a variant", { "+": [1, { var: "n" }] }],
    ["an array", { merge: [["one"], ["two"]] }],
    ["an object", { var: "obj" }],
    ["an inherited property name", { var: "name" }],
  ])("targeting returns %s: GENERAL error", (_name, targeting) => {
    const flag = compileFlag("f", {
      variants: { one: 1, two: 2 },
      defaultVariant: "one",
      targeting: targeting,
      metadata: { team: "x" },
    });
    const e = run(flag, { n: 2, obj: { a: 1 }, name: "toString" });
    expect(isEvaluationError(e)).toBe(true);
    expect(errorOf(e)).toBe("GENERAL");
    expect(e).toMatchObject({ key: "f", metadata: { team: "x" } });
    expect("value" in e).toBe(false);
    expect("errorDetails" in e && e.errorDetails.length > 0).toBe(true);
  });

  it("fractional without a bucketing value or targetingKey: TARGETING_KEY_MISSING", () => {
    const flag = compileFlag("f", {
      variants: onOff,
      defaultVariant: "off",
      targeting: {
        fractional: [
          ["on", 1],
          ["off", 1],
        ],
      },
    });
    const e = run(flag, { email: "a@b.c" });
    expect(errorOf(e)).toBe("TARGETING_KEY_MISSING");
    expect(e).toMatchObject({ key: "f", metadata: {} });
  });

  it("a throw while evaluating: GENERAL with a message", () => {
    const flag = compileFlag("f", { variants: onOff, targeting: { "+": [{ var: "obj" }, 1] } });
    const e = run(flag, { obj: { a: 1 } });
    expect(errorOf(e)).toBe("GENERAL");
    expect("errorDetails" in e ? e.errorDetails : "").toMatch(/targeting failed/);
    const thrower = compileFlag("g", { variants: onOff, targeting: { throw: { var: "kind" } } });
    const t = run(thrower, { kind: "boom" });
    expect(errorOf(t)).toBe("GENERAL");
    expect("errorDetails" in t ? t.errorDetails : "").toContain("boom");
  });

  it("SPLIT when the variant came from fractional, TARGETING_MATCH otherwise", () => {
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b", c: "c" },
      targeting: { if: [{ var: "beta" }, { fractional: [{ var: "email" }, ["a", 1], ["b", 1]] }, "c"] },
    });
    expect(reasonOf(run(flag, { beta: true, email: "x@y" }))).toBe("SPLIT");
    expect(reasonOf(run(flag, { beta: false, email: "x@y" }))).toBe("TARGETING_MATCH");
  });

  it("zero values resolve like any other", () => {
    const zero = (value: number | string | boolean) =>
      compileFlag("f", {
        variants: { zero: value, other: 1 === value ? 2 : 1 },
        defaultVariant: "zero",
        targeting: { if: [{ "==": ["ballmer@macrosoft.com", { var: ["email"] }] }, "zero"] },
      });
    for (const value of [0, "", false]) {
      expect(run(zero(value), { email: "ballmer@macrosoft.com" })).toMatchObject({ value, reason: "TARGETING_MATCH" });
      expect(run(zero(value), { email: "ballmer@none.com" })).toMatchObject({ value, reason: "DEFAULT" });
    }
  });
});

describe("values and metadata", () => {
  it("keeps JSON types: integers stay integers, objects stay objects", () => {
    const ints = compileFlag("integer-flag", { variants: { one: 1, ten: 10 }, defaultVariant: "ten" });
    const e = run(ints);
    expect("value" in e && e.value).toBe(10);
    expect(JSON.stringify(e)).toContain('"value":10,');
    const floats = compileFlag("float-flag", { variants: { half: 0.5, whole: 1.0 }, defaultVariant: "whole" });
    expect(JSON.stringify(run(floats))).toContain('"value":1,');
    const obj = { showImages: true, title: "Check out these pics!", imagesPerPage: 100, nested: [1, { a: null }] };
    const objects = compileFlag("object-flag", { variants: { template: obj, empty: {} }, defaultVariant: "template" });
    expect(run(objects)).toMatchObject({ value: obj });
  });

  it("does not let callers mutate the flag through a returned value", () => {
    const flag = compileFlag("f", { variants: { t: { list: [1] } }, defaultVariant: "t" });
    const e = run(flag);
    expect(() => {
      (e as unknown as { value: { list: number[] } }).value.list.push(2);
    }).toThrow();
    expect(run(flag)).toMatchObject({ value: { list: [1] } });
  });
});

describe("variant lookup", () => {
  // A few variants are compared key by key, many found by hashing: both ways give the same answers.
  it.each([3, 40])("names each of %i variants by its key, from the context, and none other", (count) => {
    const variants = Object.fromEntries(Array.from({ length: count }, (_, i) => [`v${i}`, i]));
    const flag = compileFlag("many", { variants, defaultVariant: "v0", targeting: { var: "pick" } });
    for (let i = 0; i < count; i++) {
      // A key built at run time: not the string object the flag's variants were written with.
      const pick = ["v", String(i)].join("");
      expect(run(flag, { pick })).toStrictEqual({ key: "many", reason: "TARGETING_MATCH", variant: pick, value: i, metadata: {} });
    }
    expect(errorOf(run(flag, { pick: `v${count}` }))).toBe("GENERAL");
    expect(errorOf(run(flag, { pick: "v" }))).toBe("GENERAL");
  });
});

describe("$flagd properties", () => {
  it("exposes $flagd.flagKey", () => {
    const flag = compileFlag("my-flag", {
      variants: { yes: true, no: false },
      targeting: { if: [{ "==": [{ var: "$flagd.flagKey" }, "my-flag"] }, "yes", "no"] },
    });
    expect(run(flag)).toMatchObject({ variant: "yes" });
  });

  it("exposes $flagd.timestamp in whole Unix seconds", () => {
    const flag = compileFlag("f", {
      variants: { "-1": -1, "0": 0, "1": 1 },
      targeting: ifTimestamp(),
    });
    const now = 1_700_000_000_999;
    expect(run(flag, { time: 1_700_000_000 }, now)).toMatchObject({ value: 0 }); // floor, not round
    expect(run(flag, { time: 1_699_999_999 }, now)).toMatchObject({ value: -1 });
    expect(run(flag, { time: 1_700_000_001 }, now)).toMatchObject({ value: 1 });
    // testbed timestamp-flag, against the real clock
    expect(evaluate(flag, { time: 1 })).toMatchObject({ value: -1 });
    expect(evaluate(flag, { time: 4133980802 })).toMatchObject({ value: 1 });
  });

  it("overwrites a client-supplied $flagd and leaves the context untouched", () => {
    const flag = compileFlag("real", {
      variants: { key: "key", ts: "ts" },
      targeting: { cat: [{ var: "$flagd.flagKey" }, ":", { var: "$flagd.timestamp" }] },
    });
    const context = { $flagd: { flagKey: "forged", timestamp: 1 } };
    const e = run(flag, context, 5000);
    // "real:5" is not a variant: the message shows what the rule saw.
    expect("errorDetails" in e ? e.errorDetails : "").toContain('"real:5"');
    expect(context).toStrictEqual({ $flagd: { flagKey: "forged", timestamp: 1 } });
  });

  it("does not expose evaluation internals to var", () => {
    const flag = compileFlag("f", { variants: { a: "a" }, targeting: { var: "" } });
    // The whole data object is not a variant; its JSON shows only the context and $flagd.
    const e = run(flag, { x: 1 }, 2000);
    expect("errorDetails" in e ? e.errorDetails : "").toContain('{"x":1,"$flagd":{"flagKey":"f","timestamp":2}}');
  });
});

function ifTimestamp() {
  const ts = { var: "$flagd.timestamp" };
  const time = { var: "time" };
  return { if: [{ ">": [ts, time] }, "-1", { "<": [ts, time] }, "1", "0"] };
}

describe("contextAttributes", () => {
  it("merges properties under the top-level keys", () => {
    expect(contextAttributes({ targetingKey: "u", email: "top", properties: { email: "prop", plan: "pro" } })).toEqual({
      targetingKey: "u",
      email: "top",
      plan: "pro",
      properties: { email: "prop", plan: "pro" },
    });
  });

  it("leaves a context without an object `properties` as it is", () => {
    const c = { a: 1, properties: "x" };
    expect(contextAttributes(c)).toBe(c);
    expect(contextAttributes({})).toEqual({});
  });
});

describe("evaluatorFor", () => {
  it("answers every flag of a pass exactly as evaluate does, each with its own flag key and evaluation state", () => {
    const onOffFlag = { variants: onOff, defaultVariant: "off" };
    const { flags } = compileEnvironment(
      env({
        segments: {
          beta: { ends_with: [{ var: "email" }, "@example.com"] },
          // Its result differs from one flag to the next within a pass: no memo may carry over.
          keyed: { "==": [{ var: "$flagd.flagKey" }, "keyedA"] },
        },
        flags: {
          split: {
            ...onOffFlag,
            targeting: {
              fractional: [
                ["on", 50],
                ["off", 50],
              ],
            },
          },
          split2: {
            ...onOffFlag,
            targeting: {
              fractional: [
                ["on", 50],
                ["off", 50],
              ],
            },
          },
          byKey: {
            variants: { a: "a", b: "b" },
            defaultVariant: "a",
            targeting: { if: [{ "==": [{ var: "$flagd.flagKey" }, "byKey"] }, "b", "a"] },
          },
          beta: { ...onOffFlag, targeting: { if: [{ $ref: "beta" }, "on", null] } },
          nested: {
            ...onOffFlag,
            targeting: {
              if: [
                { $ref: "beta" },
                {
                  fractional: [
                    ["on", 1],
                    ["off", 1],
                  ],
                },
                "off",
              ],
            },
          },
          bad: { ...onOffFlag, targeting: { cat: ["x", "y"] } },
          off: { ...onOffFlag, state: "DISABLED" },
          fixed: onOffFlag,
          keyedA: { ...onOffFlag, targeting: { if: [{ $ref: "keyed" }, "on", "off"] } },
          keyedB: { ...onOffFlag, targeting: { if: [{ $ref: "keyed" }, "on", "off"] } },
        },
      }),
    );
    for (let i = 0; i < 50; i++) {
      const context = { targetingKey: `user-${i}`, email: i % 2 ? `u${i}@example.com` : `u${i}@corp.test` };
      const now = 1_700_000_000_000 + i;
      const pass = evaluatorFor(context, now);
      for (const flag of flags.values()) expect(pass(flag)).toEqual(evaluate(flag, context, now));
    }
    const pass = evaluatorFor({}, 0);
    expect(
      [pass(flags.get("keyedA")!), pass(flags.get("keyedB")!), pass(flags.get("keyedA")!)].map((e) => "variant" in e && e.variant),
    ).toEqual(["on", "off", "on"]);
  });
});
