import { describe, expect, it } from "vitest";
import { endsWith, startsWith } from "../../src/engine/strings.js";
import { compileFlag, reasonOf, run, variantOf } from "./helpers.js";

describe("starts_with / ends_with", () => {
  const flag = compileFlag("starts-ends-flag", {
    variants: { prefix: "prefix", postfix: "postfix", none: "none" },
    defaultVariant: "none",
    targeting: {
      if: [{ starts_with: [{ var: "id" }, "abc"] }, "prefix", { if: [{ ends_with: [{ var: "id" }, "xyz"] }, "postfix", "none"] }],
    },
  });

  it.each([
    ["abcdef", "prefix"],
    ["uvwxyz", "postfix"],
    ["abcxyz", "prefix"],
    ["lmnopq", "none"],
  ])("%s -> %s", (id, expected) => {
    expect(variantOf(run(flag, { id }))).toBe(expected);
  });

  // Returning null (not false) means a missing "false" variant is never looked up: DEFAULT.
  it.each([
    ["starts_with non-string", { starts_with: [{ var: "id" }, "abc"] }, { id: 12345 }],
    ["starts_with wrong args", { starts_with: [{ var: "id" }] }, { id: "abcdef" }],
    ["ends_with non-string", { ends_with: [{ var: "id" }, "xyz"] }, { id: true }],
    ["ends_with wrong args", { ends_with: [{ var: "id" }, "xyz", "abc"] }, { id: "uvwxyz" }],
    ["missing attribute", { ends_with: [{ var: "id" }, "xyz"] }, {}],
  ])("%s -> DEFAULT", (_name, targeting, context) => {
    const f = compileFlag("f", {
      variants: { true: "yes", fallback: "fallback" },
      defaultVariant: "fallback",
      targeting: targeting,
    });
    const e = run(f, context);
    expect(reasonOf(e)).toBe("DEFAULT");
    expect(variantOf(e)).toBe("fallback");
  });

  it("operator functions", () => {
    expect(startsWith(["abc", "ab"])).toBe(true);
    expect(startsWith(["abc", "bc"])).toBe(false);
    expect(endsWith(["abc", "bc"])).toBe(true);
    expect(endsWith(["abc", ""])).toBe(true);
    expect(startsWith(["abc", 1])).toBeNull();
    expect(startsWith([null, "a"])).toBeNull();
    expect(endsWith(["abc"])).toBeNull();
    expect(endsWith("abc")).toBeNull();
  });
});
