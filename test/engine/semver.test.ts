import { describe, expect, it } from "vitest";
import { parseVersion, semVer } from "../../src/engine/semver.js";
import { compileFlag, reasonOf, run, variantOf } from "./helpers.js";

const ifChain = (...branches: [unknown, string][]): object => {
  let rule: unknown = null;
  for (const [cond, variant] of branches.reverse()) rule = { if: [cond, variant, rule] };
  return rule as object;
};
const v = { var: "version" };

describe("sem_ver testbed scenarios", () => {
  it.each([
    ["2.0.0", "equal"],
    ["2.1.0", "greater"],
    ["1.9.0", "lesser"],
    ["2.0.0-alpha", "lesser"],
    ["2.0.0.0", "none"],
  ])("equal/greater/lesser: %s -> %s", (version, expected) => {
    const flag = compileFlag("equal-greater-lesser-version-flag", {
      variants: { equal: "equal", greater: "greater", lesser: "lesser", none: "none" },
      defaultVariant: "none",
      targeting: ifChain(
        [{ sem_ver: [v, "=", "2.0.0"] }, "equal"],
        [{ sem_ver: [v, ">", "2.0.0"] }, "greater"],
        [{ sem_ver: [v, "<", "2.0.0"] }, "lesser"],
      ),
    });
    expect(variantOf(run(flag, { version }))).toBe(expected);
  });

  it.each([
    ["3.0.1", "minor"],
    ["3.1.0", "major"],
    ["4.0.0", "none"],
  ])("major/minor (flagd ~ and ^): %s -> %s", (version, expected) => {
    const flag = compileFlag("major-minor-version-flag", {
      variants: { minor: "minor", major: "major", none: "none" },
      defaultVariant: "none",
      targeting: ifChain([{ sem_ver: [v, "~", "3.0.0"] }, "minor"], [{ sem_ver: [v, "^", "3.0.0"] }, "major"]),
    });
    expect(variantOf(run(flag, { version }))).toBe(expected);
  });

  const matchFlag = (op: string, target: unknown) =>
    compileFlag("f", {
      variants: { match: "match", "no-match": "no-match" },
      defaultVariant: "no-match",
      targeting: { if: [{ sem_ver: [v, op, target] }, "match", "no-match"] },
    });

  it.each([
    ["1.0.0", "match"],
    ["v1.0.0", "match"],
    ["V1.0.0", "match"],
    ["2.0.0", "no-match"],
  ])("v prefix: %s -> %s", (version, expected) => {
    expect(variantOf(run(matchFlag("=", "v1.0.0"), { version }))).toBe(expected);
  });

  it.each([
    ["1.5.0", "match"],
    ["1.0.0", "match"],
    ["1.0", "match"],
    ["1", "match"],
    [1, "match"],
    [1.0, "match"],
    [1.2, "match"],
    ["2.0.0", "no-match"],
  ])('partial versions, ^ "1": %j -> %s', (version, expected) => {
    expect(variantOf(run(matchFlag("^", "1"), { version }))).toBe(expected);
  });

  it.each([
    [1.2, "match"],
    [1.1, "no-match"],
    [2, "match"],
    [1, "no-match"],
    ["1.2", "match"],
  ])('numeric context, > "1.1": %j -> %s', (version, expected) => {
    expect(variantOf(run(matchFlag(">", "1.1"), { version }))).toBe(expected);
  });

  it.each([["1.0.0"], ["1.0.0+other"]])("build metadata is ignored: %s = 1.0.0+build", (version) => {
    expect(variantOf(run(matchFlag("=", "1.0.0+build"), { version }))).toBe("match");
  });

  it.each([
    ["invalid version", { sem_ver: [v, "=", "not.a.version"] }],
    ["unknown operator", { sem_ver: [v, "===", "1.0.0"] }],
    ["two arguments", { sem_ver: [v, "1.0.0"] }],
  ])("%s -> null -> DEFAULT", (_name, rule) => {
    const flag = compileFlag("f", {
      variants: { true: "yes", false: "no", fallback: "fallback" },
      defaultVariant: "fallback",
      targeting: rule,
    });
    const e = run(flag, { version: "1.0.0" });
    expect(variantOf(e)).toBe("fallback");
    expect(reasonOf(e)).toBe("DEFAULT");
  });
});

describe("sem_ver operator", () => {
  it("implements every operator", () => {
    expect(semVer(["1.2.3", "=", "1.2.3"])).toBe(true);
    expect(semVer(["1.2.3", "!=", "1.2.3"])).toBe(false);
    expect(semVer(["1.2.3", "!=", "1.2.4"])).toBe(true);
    expect(semVer(["1.2.3", "<", "1.2.4"])).toBe(true);
    expect(semVer(["1.2.4", "<", "1.2.4"])).toBe(false);
    expect(semVer(["1.2.4", "<=", "1.2.4"])).toBe(true);
    expect(semVer(["1.2.5", "<=", "1.2.4"])).toBe(false);
    expect(semVer(["1.10.0", ">", "1.9.0"])).toBe(true);
    expect(semVer(["1.9.0", ">=", "1.10.0"])).toBe(false);
    expect(semVer(["1.9.0", ">=", "1.9.0"])).toBe(true);
  });

  it("uses flagd's ~ (same major.minor) and ^ (same major), not npm ranges", () => {
    expect(semVer(["3.0.0", "^", "3.5.0"])).toBe(true); // npm ^3.5.0 would reject 3.0.0
    expect(semVer(["3.9.9", "^", "3.0.0"])).toBe(true);
    expect(semVer(["4.0.0", "^", "3.0.0"])).toBe(false);
    expect(semVer(["0.2.0", "^", "0.1.0"])).toBe(true); // npm ^0.1.0 would reject 0.2.0
    expect(semVer(["3.0.0", "~", "3.0.9"])).toBe(true);
    expect(semVer(["3.1.0", "~", "3.0.0"])).toBe(false);
  });

  it("orders prereleases per SemVer", () => {
    const order = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
    ];
    for (let i = 0; i + 1 < order.length; i++) expect(semVer([order[i], "<", order[i + 1]])).toBe(true);
  });

  it.each([
    ["2.0.0.0"],
    ["01.0.0"],
    ["1.02.0"],
    ["1.2-pre"], // x/mod/semver: prerelease only after MAJOR.MINOR.PATCH
    ["1.0.0-01"],
    [" 1.0.0"],
    ["1.0.0 "],
    ["vv1.0.0"],
    ["=1.0.0"],
    [""],
    ["v"],
    ["1.0.0-"],
    ["1.0.0+"],
    [true],
    [null],
    [{}],
    [-1],
    [1e6], // Go prints 1e+06
  ])("rejects %j", (input) => {
    expect(parseVersion(input)).toBeNull();
    expect(semVer([input, "=", "1.0.0"])).toBeNull();
    expect(semVer(["1.0.0", "!=", input])).toBeNull();
  });

  it.each([
    ["1", "1.0.0"],
    ["v1.2", "1.2.0"],
    ["V1.2.3", "1.2.3"],
    [2, "2.0.0"],
    [1.25, "1.25.0"],
    ["1.0.0-alpha.1+build.5", "1.0.0-alpha.1"],
    ["0.0.0", "0.0.0"],
  ])("accepts %j as %s", (input, expected) => {
    expect(parseVersion(input)?.version).toBe(expected);
  });

  it.each([
    [["1.0.0", "=", "1.0.0", "x"]],
    [["1.0.0", "="]],
    [["1.0.0", 1, "1.0.0"]],
    [["1.0.0", "==", "1.0.0"]],
    [["1.0.0", "toString", "1.0.0"]],
    ["1.0.0"],
  ])("returns null for malformed arguments %j", (args) => {
    expect(semVer(args)).toBeNull();
  });

  it("answers the same for a version seen again after many others (the parsed-version memo is bounded)", () => {
    expect(semVer(["1.2.3", "<", "1.10.0"])).toBe(true);
    for (let i = 0; i < 12_000; i++) expect(semVer([`${i + 1}.0.0`, ">=", "0.0.1"])).toBe(true);
    expect(semVer(["1.2.3", "<", "1.10.0"])).toBe(true);
    expect(semVer(["v1.2.3-rc.1", "<", "1.2.3"])).toBe(true);
    expect(parseVersion(`1.0.0-${"a".repeat(300)}`)).toBeNull();
  });

  it("accepts the longest valid version and rejects one a character longer", () => {
    const longest = `1.0.0-${"a".repeat(250)}`; // 256 characters, semver's limit
    expect(parseVersion(longest)?.version).toBe(longest);
    expect(parseVersion(`v${longest}`)?.version).toBe(longest);
    expect(parseVersion(`${longest}a`)).toBeNull();
  });
});
