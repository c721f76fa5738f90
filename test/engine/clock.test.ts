/** readsClock: which rules may answer differently from one second to the next. */
import { describe, expect, it } from "vitest";
import { readsClock } from "../../src/engine/clock.js";
import { compileEnvironment } from "../../src/engine/compile.js";
import { env } from "./helpers.js";

describe("readsClock", () => {
  it.each([
    ["a plain attribute", { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", "off"] }],
    ["an attribute with a default", { var: ["plan", "free"] }],
    ["the flag key", { cat: [{ var: "$flagd.flagKey" }, { var: "email" }] }],
    [
      "fractional, sem_ver and the string operators",
      {
        if: [
          { sem_ver: [{ var: "version" }, ">=", "2.0.0"] },
          {
            fractional: [
              ["a", 1],
              ["b", 1],
            ],
          },
          null,
        ],
      },
    ],
    ["missing with literal names", { missing: ["email", "plan"] }],
    ["no data at all", { "==": [1, 1] }],
  ])("is false for %s", (_name, rule) => {
    expect(readsClock(rule)).toBe(false);
  });

  it.each([
    ["$flagd.timestamp", { ">": [{ var: "$flagd.timestamp" }, 1700000000] }],
    ["$flagd as a whole", { var: "$flagd" }],
    ["the whole data", { var: "" }],
    ["var without a path", { var: [] }],
    ["val by segments", { val: ["$flagd", "timestamp"] }],
    ["val of an enclosing scope", { map: [{ var: "items" }, { val: [[-1]] }] }],
    ["a computed path", { var: { cat: ["$fl", "agd.timestamp"] } }],
    ["a computed default", { var: ["plan", { var: "other" }] }],
    ["the clock inside get", { get: [{ var: "" }, "$flagd"] }],
    ["the clock from inside an iterator", { map: [{ var: "items" }, { var: "../$flagd.timestamp" }] }],
    ["an enclosing scope from inside an iterator", { map: [{ var: "items" }, { var: "../" }] }],
    ["the clock deep inside a rule", { and: [true, { or: [{ "<": [{ var: "$flagd.timestamp" }, 5] }] }] }],
  ])("is true for %s", (_name, rule) => {
    expect(readsClock(rule)).toBe(true);
  });

  it("asks about segment operators instead of looking into them", () => {
    const segments = new Map([
      ["$segment#0", false],
      ["$segment#1", true],
    ]);
    expect(readsClock({ and: [{ "$segment#0": [] }, { var: "plan" }] }, (op) => segments.get(op))).toBe(false);
    expect(readsClock({ and: [{ "$segment#0": [] }, { "$segment#1": [] }] }, (op) => segments.get(op))).toBe(true);
  });

  it("marks compiled flags clockFree through the segments they use, however nested", () => {
    const onOff = { variants: { on: true, off: false }, defaultVariant: "off" };
    const { flags } = compileEnvironment(
      env({
        segments: {
          late: { ">": [{ var: "$flagd.timestamp" }, 1700000000] },
          outer: { and: [{ $ref: "late" }, true] },
          beta: { ends_with: [{ var: "email" }, "@example.com"] },
        },
        flags: {
          static: onOff,
          beta: { ...onOff, targeting: { if: [{ $ref: "beta" }, "on", "off"] } },
          late: { ...onOff, targeting: { if: [{ $ref: "outer" }, "on", "off"] } },
          direct: { ...onOff, targeting: { if: [{ "<": [{ var: "$flagd.timestamp" }, 5] }, "on", "off"] } },
          broken: { ...onOff, targeting: { if: [{ $ref: "missing" }, "on", "off"] } },
        },
      }),
    );
    const clockFree = Object.fromEntries([...flags].map(([key, flag]) => [key, flag.clockFree === true]));
    expect(clockFree).toEqual({ static: true, beta: true, late: false, direct: false, broken: true });
  });
});
