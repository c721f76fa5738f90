/** WeakMemo: a WeakMap whose last lookup is remembered, never at the cost of a wrong answer. */
import { describe, expect, it } from "vitest";
import { WeakMemo } from "../../src/answers/weak-memo.js";

describe("WeakMemo", () => {
  it("answers as a WeakMap would, whatever was looked up last", () => {
    const memo = new WeakMemo<object, string>();
    const [a, b, c] = [{}, {}, {}];
    expect(memo.get(a)).toBeUndefined();
    memo.set(a, "a");
    memo.set(b, "b");
    expect([memo.get(a), memo.get(a), memo.get(b), memo.get(c), memo.get(b), memo.get(a)]).toEqual(["a", "a", "b", undefined, "b", "a"]);
    // A key set again after it was looked up gives its new value.
    memo.set(a, "a2");
    expect(memo.get(a)).toBe("a2");
    memo.get(b);
    memo.set(a, "a3");
    expect([memo.get(b), memo.get(a)]).toEqual(["b", "a3"]);
  });

  it("remembers falsy values other than undefined", () => {
    const memo = new WeakMemo<object, string | null>();
    const key = {};
    memo.set(key, null);
    expect(memo.get({})).toBeUndefined();
    expect(memo.get(key)).toBeNull();
  });
});
