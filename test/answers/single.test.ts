/** Single-flag answers are reused per (snapshot, flag, request body) only while right. */
import { describe, expect, it } from "vitest";
import { compileEnvironment } from "../../src/engine/compile.js";
import { createSingleAnswers } from "../../src/answers/single.js";
import { createSnapshot } from "../../src/store/snapshot.js";
import { env } from "../engine/helpers.js";

const snapshotOf = (flags: Parameters<typeof env>[0]["flags"]) => {
  const config = env({ flags });
  return createSnapshot({ ...config, name: "dev" }, compileEnvironment(config).flags, "dev-key-0123456789");
};
const byPlan = (on = "on") => ({
  variants: { on: true, off: false },
  defaultVariant: "off",
  targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, on, on === "on" ? "off" : "on"] },
});
const byClock = {
  variants: { even: "even", odd: "odd" },
  defaultVariant: "odd",
  targeting: { if: [{ "==": [{ "%": [{ var: "$flagd.timestamp" }, 2] }, 0] }, "even", "odd"] },
};
const split = {
  variants: { a: "a", b: "b" },
  defaultVariant: "a",
  targeting: {
    fractional: [
      ["a", 1],
      ["b", 1],
    ],
  },
};
const request = (context: object) => JSON.stringify({ context });
const T = 1_700_000_000_000;

describe("createSingleAnswers", () => {
  it("answers per flag and context, and anew for a new snapshot", () => {
    const answer = createSingleAnswers();
    const first = snapshotOf({ f: byPlan(), g: byPlan() });
    expect(JSON.parse(answer(first, "f", request({ plan: "pro" }), T).json)).toMatchObject({ key: "f", value: true });
    expect(JSON.parse(answer(first, "f", request({ plan: "pro" }), T).json)).toMatchObject({ key: "f", value: true });
    expect(JSON.parse(answer(first, "g", request({ plan: "pro" }), T).json)).toMatchObject({ key: "g", value: true });
    expect(JSON.parse(answer(first, "f", request({ plan: "free" }), T).json)).toMatchObject({ key: "f", value: false });
    const second = snapshotOf({ f: byPlan("off"), g: byPlan() });
    expect(JSON.parse(answer(second, "f", request({ plan: "pro" }), T).json)).toMatchObject({ key: "f", value: false });
  });

  it("answers a flag that reads the clock anew every second", () => {
    const answer = createSingleAnswers();
    const snapshot = snapshotOf({ t: byClock });
    expect(JSON.parse(answer(snapshot, "t", "", T).json).variant).toBe("even");
    expect(JSON.parse(answer(snapshot, "t", "", T + 999).json).variant).toBe("even");
    expect(JSON.parse(answer(snapshot, "t", "", T + 1000).json).variant).toBe("odd");
  });

  it("keeps evaluation errors as the same 400, and throws request errors every time", () => {
    const answer = createSingleAnswers();
    const snapshot = snapshotOf({ s: split });
    for (let i = 0; i < 2; i++) {
      const missing = answer(snapshot, "s", request({}), T);
      expect(missing.status).toBe(400);
      expect(JSON.parse(missing.json)).toMatchObject({ key: "s", errorCode: "TARGETING_KEY_MISSING" });
      expect(() => answer(snapshot, "nope", request({}), T)).toThrow(/was not found/);
      expect(() => answer(snapshot, "s", "{not json", T)).toThrow(/not valid JSON/);
      expect(() => answer(snapshot, "nope", "{not json", T)).toThrow(/not valid JSON/);
    }
  });

  it("never confuses one flag key and body with another pair spelling the same text", () => {
    const answer = createSingleAnswers();
    const snapshot = snapshotOf({ a: byPlan(), "a ": byPlan("off") });
    const body = request({ plan: "pro" });
    // "a " + body and "a" + " " + body are the same text.
    expect(JSON.parse(answer(snapshot, "a ", body, T).json)).toMatchObject({ key: "a ", value: false });
    expect(JSON.parse(answer(snapshot, "a", ` ${body}`, T).json)).toMatchObject({ key: "a", value: true });
  });
});
