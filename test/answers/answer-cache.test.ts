/** The answer cache: a repeated request costs no computation, and only while the answer holds. */
import { describe, expect, it } from "vitest";
import { AnswerCache, MAX_CACHED_REQUEST_BYTES } from "../../src/answers/answer-cache.js";

/** A cache of answers 10 "bytes" each, and the computations it asked for, in order. */
function cache(maxBytes = 1024, seenRequests = 0) {
  const computed: string[] = [];
  const answers = new AnswerCache<string>(maxBytes, () => 10, seenRequests);
  const answer = (scope: string, request: string, second = 0): string => {
    const kept = answers.get(scope, request, second);
    if (kept !== undefined) return kept;
    const computedAnswer = `${scope}|${request}|${second}`;
    computed.push(computedAnswer);
    answers.set(scope, request, second, computedAnswer);
    return computedAnswer;
  };
  return { answer, computed };
}

describe("AnswerCache", () => {
  it("computes a request once, whether asked again at once or after others", () => {
    const { answer, computed } = cache();
    expect([answer("", "a"), answer("", "a"), answer("", "b"), answer("", "a"), answer("", "b")]).toEqual([
      "|a|0",
      "|a|0",
      "|b|0",
      "|a|0",
      "|b|0",
    ]);
    expect(computed).toEqual(["|a|0", "|b|0"]);
  });

  it("answers the same request anew in another second, the last one asked included", () => {
    const { answer, computed } = cache();
    expect([answer("", "a", 1), answer("", "a", 1), answer("", "a", 2), answer("", "a", 2)]).toEqual(["|a|1", "|a|1", "|a|2", "|a|2"]);
    expect(computed).toEqual(["|a|1", "|a|2"]);
  });

  it("keeps scopes apart, even where a scope and request pair spells another's text", () => {
    const { answer, computed } = cache();
    expect([answer("f", "x"), answer("fx", ""), answer("f", "x"), answer("", "fx"), answer("fx", "")]).toEqual([
      "f|x|0",
      "fx||0",
      "f|x|0",
      "|fx|0",
      "fx||0",
    ]);
    expect(computed).toEqual(["f|x|0", "fx||0", "|fx|0"]);
  });

  it("evicts the least recently used, counting a repeat of the last request as a use", () => {
    // Three entries fit: each is its scope and request twice over (UTF-16) plus 10 plus 64 bytes.
    const { answer, computed } = cache(3 * (2 * "a".length + 10 + 64));
    for (const request of ["a", "b", "c", "a", "a", "d"]) answer("", request);
    expect(computed).toEqual(["|a|0", "|b|0", "|c|0", "|d|0"]); // d evicted b, the least recently used
    answer("", "a");
    answer("", "c");
    expect(computed).toHaveLength(4);
    answer("", "b");
    expect(computed.at(-1)).toBe("|b|0");
  });

  it("keeps nothing when turned off or for a request over the size limit", () => {
    const off = cache(0);
    off.answer("", "a");
    off.answer("", "a");
    expect(off.computed).toHaveLength(2);
    const long = "x".repeat(MAX_CACHED_REQUEST_BYTES + 1);
    const on = cache(1024 * 1024);
    on.answer("", long);
    on.answer("", long);
    expect(on.computed).toHaveLength(2);
  });

  it("keeps an answer only for its own second, scope and request", () => {
    const answers = new AnswerCache<string>(1024, () => 10);
    answers.set("f", "x", 1, "answer");
    expect(answers.get("f", "x", 1)).toBe("answer");
    expect([answers.get("f", "x", 2), answers.get("g", "x", 1), answers.get("f", "y", 1), answers.get("", "fx", 1)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("with seenRequests, keeps an answer from its request's second time, and a stale one replaced at once", () => {
    const { answer, computed } = cache(1024, 100);
    for (const request of ["a", "b", "a", "a", "b", "b", "b"]) answer("", request);
    expect(computed).toEqual(["|a|0", "|b|0", "|a|0", "|b|0"]);
    // Kept, but for another second: replaced at its first request in the new one.
    answer("", "a", 1);
    answer("", "a", 1);
    expect(computed.slice(4)).toEqual(["|a|1"]);
  });

  it("forgets the requests it saw once when they pass seenRequests", () => {
    // Room for two requests seen once.
    const { answer, computed } = cache(1024, 2);
    for (const request of ["a", "b", "c", "a", "a", "a"]) answer("", request);
    // c forgot a and b; a came again as if for the first time, then was kept.
    expect(computed).toEqual(["|a|0", "|b|0", "|c|0", "|a|0", "|a|0"]);
  });

  it("answers two requests that share a hash each with its own answer, the one kept in turn", () => {
    // Two bodies with one 31-bit hash (murmur3, found by search): entries are checked against the text.
    const [first, second] = ['{"context":{"targetingKey":"user-114972"}}', '{"context":{"targetingKey":"user-139174"}}'];
    const { answer, computed } = cache();
    expect([answer("", first), answer("", second), answer("", first), answer("", first), answer("", second)]).toEqual([
      `|${first}|0`,
      `|${second}|0`,
      `|${first}|0`,
      `|${first}|0`,
      `|${second}|0`,
    ]);
    // Each replaced the other: every change of request computed, a repeat of the last one did not.
    expect(computed).toEqual([`|${first}|0`, `|${second}|0`, `|${first}|0`, `|${second}|0`]);
  });

  it("tells requests seen once apart by scope as well as by text", () => {
    const { answer, computed } = cache(1024, 100);
    // "ab" in scope "" and "b" in scope "a" spell the same text: neither is the other's second time.
    for (const [scope, request] of [
      ["", "ab"],
      ["a", "b"],
      ["a", "b"],
      ["a", "b"],
      ["", "ab"],
      ["", "ab"],
    ] as const)
      answer(scope, request);
    expect(computed).toEqual(["|ab|0", "a|b|0", "a|b|0", "|ab|0"]);
  });
});
