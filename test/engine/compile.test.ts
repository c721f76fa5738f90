import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/model/types.js";
import { compileEnvironment } from "../../src/engine/compile.js";
import { ruleKey } from "../../src/engine/rule-key.js";
import { env, errorOf, run } from "./helpers.js";

const isBallmer = { "==": ["ballmer@macrosoft.com", { var: ["email"] }] };

describe("$ref resolution", () => {
  it("inlines a segment ($evaluators) at load time", () => {
    const config = env({
      segments: { is_ballmer: isBallmer },
      flags: {
        "some-email-targeted-flag": {
          variants: { hi: "hi", bye: "bye" },
          defaultVariant: "bye",
          targeting: { if: [{ $ref: "is_ballmer" }, "hi", null] },
        },
      },
    });
    const { flags, errors } = compileEnvironment(config);
    expect(errors).toEqual([]);
    const flag = flags.get("some-email-targeted-flag")!;
    expect(run(flag, { email: "ballmer@macrosoft.com" })).toMatchObject({ value: "hi", reason: "TARGETING_MATCH" });
    expect(run(flag, { email: "user@example.com" })).toMatchObject({ value: "bye", reason: "DEFAULT" });
  });

  it("resolves refs inside segments (nested), and a ref as the whole targeting", () => {
    const { flags, errors } = compileEnvironment(
      env({
        segments: {
          internal: { ends_with: [{ var: "email" }, "@corp.com"] },
          beta: { in: [{ var: "plan" }, ["beta", "pro"]] },
          "internal-beta": { and: [{ $ref: "internal" }, { $ref: "beta" }] },
          pick: { if: [{ $ref: "internal-beta" }, "on", "off"] },
        },
        flags: {
          a: { variants: { on: true, off: false }, defaultVariant: "off", targeting: { if: [{ $ref: "internal-beta" }, "on", null] } },
          b: { variants: { on: true, off: false }, targeting: { $ref: "pick" } },
        },
      }),
    );
    expect(errors).toEqual([]);
    expect(run(flags.get("a")!, { email: "x@corp.com", plan: "pro" })).toMatchObject({ variant: "on" });
    expect(run(flags.get("a")!, { email: "x@corp.com", plan: "free" })).toMatchObject({ variant: "off", reason: "DEFAULT" });
    expect(run(flags.get("b")!, { email: "x@other.com", plan: "pro" })).toMatchObject({ variant: "off", reason: "TARGETING_MATCH" });
  });

  it("treats a ref to an empty segment like empty targeting", () => {
    const { flags, errors } = compileEnvironment(
      env({ segments: { nothing: {} }, flags: { f: { variants: { a: 1 }, defaultVariant: "a", targeting: { $ref: "nothing" } } } }),
    );
    expect(errors).toEqual([]);
    expect(run(flags.get("f")!)).toMatchObject({ reason: "STATIC" });
  });

  it("reports an unknown ref at the $ref key, and the flag fails with PARSE_ERROR", () => {
    const { flags, errors } = compileEnvironment(
      env({
        segments: { is_ballmer: isBallmer },
        flags: {
          "new-ui": { variants: { on: true, off: false }, defaultVariant: "off", targeting: { if: [{ $ref: "nope" }, "on", null] } },
        },
      }),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toEqual(["flags", "new-ui", "targeting", "if", 0, "$ref"]);
    expect(errors[0]!.message).toMatch(/unknown segment "nope"/);
    expect(errors[0]!.message).toContain("is_ballmer");
    const e = run(flags.get("new-ui")!, { email: "x" });
    expect(errorOf(e)).toBe("PARSE_ERROR");
    expect(e).toMatchObject({ key: "new-ui", metadata: {} });
  });

  it("reports unknown refs inside segments at the segment's path, once", () => {
    const { flags, errors } = compileEnvironment(
      env({
        segments: { outer: { or: [{ $ref: "ghost" }, true] } },
        flags: {
          a: { variants: { on: true }, targeting: { if: [{ $ref: "outer" }, "on", null] } },
          b: { variants: { on: true }, targeting: { $ref: "outer" } },
        },
      }),
    );
    expect(errors).toEqual([{ path: ["segments", "outer", "or", 0, "$ref"], message: expect.stringMatching(/ghost/) }]);
    expect(errorOf(run(flags.get("a")!))).toBe("PARSE_ERROR");
    expect(errorOf(run(flags.get("b")!))).toBe("PARSE_ERROR");
  });

  it("detects cycles, including self-references, and reports each once", () => {
    const { flags, errors } = compileEnvironment(
      env({
        segments: {
          a: { and: [{ $ref: "b" }, true] },
          b: { or: [false, { $ref: "a" }] },
          self: { "!": { $ref: "self" } },
        },
        flags: { f: { variants: { on: true }, targeting: { if: [{ $ref: "a" }, "on", null] } } },
      }),
    );
    expect(errors).toHaveLength(2);
    expect(errors).toContainEqual({ path: ["segments", "b", "or", 1, "$ref"], message: "segment reference cycle: a -> b -> a" });
    expect(errors).toContainEqual({ path: ["segments", "self", "!", "$ref"], message: "segment reference cycle: self -> self" });
    expect(errorOf(run(flags.get("f")!))).toBe("PARSE_ERROR");
  });

  it("rejects $ref objects with other keys or a non-string name", () => {
    const { errors } = compileEnvironment(
      env({
        flags: {
          f: { variants: { on: true }, targeting: { if: [{ $ref: "x", extra: 1 }, "on", null] } },
          g: { variants: { on: true }, targeting: { if: [{ $ref: 3 }, "on", null] } },
        },
        segments: { x: true },
      }),
    );
    expect(errors.map((e) => e.path)).toEqual([
      ["flags", "f", "targeting", "if", 0],
      ["flags", "g", "targeting", "if", 0, "$ref"],
    ]);
  });

  it("does not modify the configuration", () => {
    const config = env({
      segments: { s: { "==": [{ var: "x" }, 1] } },
      flags: { f: { variants: { on: true }, targeting: { if: [{ $ref: "s" }, "on", null] } } },
    });
    const before = structuredClone(config);
    compileEnvironment(config);
    expect(config).toStrictEqual(before);
  });
});

describe("operator checking and other compile errors", () => {
  it("reports unknown operators with the path to the operator key, collecting all of them", () => {
    const { flags, errors } = compileEnvironment(
      env({
        segments: { beta: { foo: [1, 2] }, fine: { "==": [1, 1] } },
        flags: {
          "error-targeting-flag": { variants: { one: 1 }, defaultVariant: "one", targeting: { invalid: ["key", "value"] } },
          deep: {
            variants: { one: 1 },
            targeting: { if: [{ and: [true, { bogus: { var: "x" } }] }, "one", { nope: [{ alsoBad: 1 }] }] },
          },
          ok: { variants: { one: 1 }, targeting: { if: [{ $ref: "fine" }, "one", null] } },
        },
      }),
    );
    expect(errors).toEqual([
      { path: ["segments", "beta", "foo"], message: 'unknown operator "foo"' },
      { path: ["flags", "error-targeting-flag", "targeting", "invalid"], message: 'unknown operator "invalid"' },
      { path: ["flags", "deep", "targeting", "if", 0, "and", 1, "bogus"], message: 'unknown operator "bogus"' },
      { path: ["flags", "deep", "targeting", "if", 2, "nope"], message: 'unknown operator "nope" (did you mean "none"?)' },
      { path: ["flags", "deep", "targeting", "if", 2, "nope", 0, "alsoBad"], message: 'unknown operator "alsoBad"' },
    ]);
    expect(errorOf(run(flags.get("error-targeting-flag")!))).toBe("PARSE_ERROR");
    expect(run(flags.get("ok")!)).toMatchObject({ variant: "one" });
  });

  it("does not take Object.prototype members for operators", () => {
    const { errors } = compileEnvironment(
      env({
        flags: {
          f: { variants: { a: 1 }, targeting: { toString: [] } },
          g: { variants: { a: 1 }, targeting: { constructor: ["a"] } },
        },
      }),
    );
    expect(errors.map((e) => e.message)).toEqual(['unknown operator "toString"', 'unknown operator "constructor"']);
  });

  it("reports an object with several operator keys at the object", () => {
    const { errors } = compileEnvironment(
      env({ flags: { f: { variants: { a: 1 }, targeting: { if: [{ var: "x", cat: ["a"] }, "a", null] } } } }),
    );
    expect(errors).toEqual([{ path: ["flags", "f", "targeting", "if", 0], message: expect.stringContaining('"var", "cat"') }]);
  });

  it("knows flagd's operators and standard JsonLogic", () => {
    const targeting = {
      if: [
        {
          and: [
            { sem_ver: [{ var: "v" }, ">=", "1.0.0"] },
            { starts_with: [{ var: "e" }, "a"] },
            { ends_with: [{ var: "e" }, "z"] },
            { in: ["x", { merge: [["x"], { map: [[1], { cat: ["y", { var: "" }] }] }] }] },
            { "!": { missing_some: [1, ["q", "v"]] } },
            { "!": { missing: ["v"] } },
          ],
        },
        { fractional: [["a", 1]] },
        null,
      ],
    };
    const { flags, errors } = compileEnvironment(env({ flags: { f: { variants: { a: 1 }, targeting } } }));
    expect(errors).toEqual([]);
    expect(run(flags.get("f")!, { v: "1.2.0", e: "abz", targetingKey: "t" })).toMatchObject({ value: 1, reason: "SPLIT" });
  });

  it("reports other compile failures at the targeting (or segment) root", () => {
    // json-logic-engine folds constant expressions at build time: these throw while compiling.
    const { flags, errors } = compileEnvironment(
      env({
        segments: { bad: { "+": [{ preserve: { a: 1 } }, 1] } },
        flags: { f: { variants: { a: 1 }, targeting: { if: [{ "==": [{ preserve: { a: 1 } }, 1] }, "a", null] } } },
      }),
    );
    expect(errors.map((e) => e.path)).toEqual([
      ["segments", "bad"],
      ["flags", "f", "targeting"],
    ]);
    expect(errors[0]!.message).toMatch(/^segment cannot be compiled: /);
    expect(errors[1]!.message).toMatch(/^targeting cannot be compiled: /);
    expect(errorOf(run(flags.get("f")!))).toBe("PARSE_ERROR");
  });

  it("does not look for operators inside preserve", () => {
    const { errors } = compileEnvironment(
      env({ flags: { f: { variants: { a: 1 }, targeting: { if: [{ var: "x" }, { preserve: { whatever: 1, $ref: "nope" } }, null] } } } }),
    );
    expect(errors).toEqual([]);
  });
});

describe("compiled flags", () => {
  it("merges flag-set metadata under the flag's own", () => {
    const { flags } = compileEnvironment(
      env({
        metadata: { team: "web", version: 2, flagSetId: "set" },
        flags: {
          combined: { variants: { a: 1 }, defaultVariant: "a", metadata: { team: "checkout", beta: true } },
          "only-set": { variants: { a: 1 }, defaultVariant: "a" },
        },
      }),
    );
    expect(flags.get("combined")!.metadata).toEqual({ team: "checkout", version: 2, flagSetId: "set", beta: true });
    expect(run(flags.get("only-set")!).metadata).toEqual({ team: "web", version: 2, flagSetId: "set" });
  });

  it("keeps the flags in file order with their state and defaults", () => {
    const { flags } = compileEnvironment(
      env({
        flags: {
          z: { variants: { a: 1 }, defaultVariant: "a" },
          a: { state: "DISABLED", variants: { a: 1 } },
        },
      }),
    );
    expect([...flags.keys()]).toEqual(["z", "a"]);
    expect(flags.get("a")).toMatchObject({ key: "a", state: "DISABLED", defaultVariant: null });
    expect(Object.isFrozen(flags.get("a"))).toBe(true);
  });

  it("compiles targeting once: evaluations do not rebuild it", () => {
    const { flags } = compileEnvironment(env({ flags: { f: { variants: { a: 1, b: 2 }, targeting: { if: [{ var: "x" }, "a", "b"] } } } }));
    const flag = flags.get("f")!;
    const rule = flag.rule;
    expect(typeof rule).toBe("function");
    run(flag, { x: true });
    run(flag, { x: false });
    expect(flag.rule).toBe(rule);
  });
});

describe("rules written more than once", () => {
  const shared = {
    segments: { beta: { ends_with: [{ var: "email" }, "@example.com"] } },
    flags: {
      one: {
        variants: { a: "a", b: "b" },
        defaultVariant: "b",
        targeting: {
          if: [
            { $ref: "beta" },
            {
              fractional: [
                ["a", 50],
                ["b", 50],
              ],
            },
            "b",
          ],
        },
      },
      two: {
        variants: { a: "a", b: "b" },
        defaultVariant: "b",
        targeting: {
          if: [
            { $ref: "beta" },
            {
              fractional: [
                ["a", 50],
                ["b", 50],
              ],
            },
            "b",
          ],
        },
      },
    },
  };
  const contexts = Array.from({ length: 64 }, (_, i) => ({
    targetingKey: `user-${i}`,
    email: i % 4 === 0 ? `u${i}@corp.test` : `u${i}@example.com`,
  }));

  it("compile to one function that still buckets by each flag's own key", () => {
    const { flags, errors } = compileEnvironment(env(shared));
    expect(errors).toEqual([]);
    const [one, two] = [flags.get("one")!, flags.get("two")!];
    expect(one.rule).toBe(two.rule);
    // Each flag answers as it does when compiled alone.
    for (const key of ["one", "two"] as const) {
      const alone = compileEnvironment(env({ ...shared, flags: { [key]: shared.flags[key] } })).flags.get(key)!;
      expect(alone.rule).not.toBe(one.rule);
      for (const context of contexts) expect(run(flags.get(key)!, context)).toEqual(run(alone, context));
    }
    // `$flagd.flagKey` differs, so the buckets do.
    expect(contexts.some((c) => run(one, c).value !== run(two, c).value)).toBe(true);
    expect(contexts.map((c) => run(one, c).reason)).toContain("SPLIT");
  });

  it("report each flag's problem at its own path", () => {
    const broken = { variants: { a: 1 }, targeting: { if: [{ nope: [1] }, "a", null] } };
    const { errors, broken: unusable } = compileEnvironment(env({ flags: { x: broken, y: broken } }));
    expect(errors.map((e) => e.path)).toEqual([
      ["flags", "x", "targeting", "if", 0, "nope"],
      ["flags", "y", "targeting", "if", 0, "nope"],
    ]);
    expect([...unusable.keys()]).toEqual(["x", "y"]);
  });

  it("share whether they read the clock", () => {
    const clock = { variants: { a: 1, b: 2 }, targeting: { if: [{ ">": [{ var: "$flagd.timestamp" }, 0] }, "a", "b"] } };
    const { flags } = compileEnvironment(
      env({ flags: { x: clock, y: clock, z: { variants: { a: 1, b: 2 }, targeting: { if: [{ var: "$flagd.flagKey" }, "a", "b"] } } } }),
    );
    expect([flags.get("x")!.clockFree, flags.get("y")!.clockFree, flags.get("z")!.clockFree]).toEqual([undefined, undefined, true]);
  });

  it("are told apart when JSON would not tell them apart (.inf, -0)", () => {
    const flag = (value: number | null) => ({ variants: { a: 1, b: 2 }, targeting: { if: [{ "==": [{ var: "n" }, value] }, "a", "b"] } });
    const { flags } = compileEnvironment(env({ flags: { inf: flag(Infinity), nul: flag(null), neg: flag(-Infinity) } }));
    expect(run(flags.get("inf")!, { n: null }).value).toBe(2);
    expect(run(flags.get("nul")!, { n: null }).value).toBe(1);
    expect(new Set(["inf", "nul", "neg"].map((k) => flags.get(k)!.rule)).size).toBe(3);
  });
});

describe("compiled flags", () => {
  it("own a frozen copy of their variants, own __proto__ keys included", () => {
    const variants = JSON.parse('{"a": {"list": [1, {"x": 2}], "__proto__": {"y": 3}}, "b": {"list": []}}') as Record<string, JsonValue>;
    const { flags } = compileEnvironment(env({ flags: { f: { variants, defaultVariant: "a" } } }));
    const copy = flags.get("f")!.variants;
    expect(copy).toEqual(variants);
    expect(copy.a).not.toBe(variants.a);
    expect(Object.getOwnPropertyNames(copy.a)).toEqual(["list", "__proto__"]);
    expect(Object.isFrozen(copy.a) && Object.isFrozen((copy.a as { list: unknown[] }).list)).toBe(true);
    (variants.a as { list: unknown[] }).list.push(3); // the file's value changing later does not reach the flag
    expect((copy.a as { list: unknown[] }).list).toHaveLength(2);
  });

  it("build their answers on their first evaluation, then hand out the same objects", () => {
    const config = env({
      flags: {
        t: {
          variants: { on: true, off: false },
          defaultVariant: "off",
          targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", null] },
        },
        s: { variants: { a: "a", b: "b" }, defaultVariant: "b" },
        d: { state: "DISABLED", variants: { on: true }, defaultVariant: "on" },
      },
    });
    const { flags } = compileEnvironment(config);
    expect(run(flags.get("t")!, { plan: "pro" })).toEqual({
      key: "t",
      reason: "TARGETING_MATCH",
      variant: "on",
      value: true,
      metadata: {},
    });
    expect(run(flags.get("t")!, { plan: "free" })).toEqual({ key: "t", reason: "DEFAULT", variant: "off", value: false, metadata: {} });
    expect(run(flags.get("s")!)).toEqual({ key: "s", reason: "STATIC", variant: "b", value: "b", metadata: {} });
    expect(run(flags.get("d")!)).toEqual({ key: "d", reason: "DISABLED", metadata: {} });
    for (const [key, context] of [
      ["t", { plan: "pro" }],
      ["t", { plan: "free" }],
      ["s", {}],
      ["d", {}],
    ] as const) {
      const first = run(flags.get(key)!, context);
      expect(run(flags.get(key)!, context)).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
    }
  });
});

describe("ruleKey", () => {
  it("gives equal texts for equal rules only", () => {
    expect(ruleKey({ if: [{ var: "x" }, "a", null] })).toBe(ruleKey({ if: [{ var: "x" }, "a", null] }));
    const distinct = [
      null,
      Infinity,
      -Infinity,
      NaN,
      0,
      -0,
      1,
      "1",
      true,
      "true",
      [1],
      { a: 1, b: 2 },
      { b: 2, a: 1 },
      { "a,b": 1 },
      { a: 1 },
    ];
    expect(new Set(distinct.map((v) => ruleKey({ "==": [{ var: "n" }, v] }))).size).toBe(distinct.length);
  });

  it("is the rule's JSON text where JSON tells every value apart, the same text the writer gives", () => {
    const rule = { if: [{ in: [{ var: "email" }, ["a@x.test", "b@x.test"]] }, "on", null], __proto__: null, 'k"ey': [1.5, 0, true] };
    expect(ruleKey(rule)).toBe(JSON.stringify(rule));
    // A rule holding -0 is written by the writer: same text as JSON but for the -0.
    expect(ruleKey({ "==": [{ var: "n" }, -0] })).toBe('{"==":[{"var":"n"},-0]}');
    expect(ruleKey({ "==": [{ var: "n" }, 0] })).toBe('{"==":[{"var":"n"},0]}');
  });

  it("is undefined for what is not plain data", () => {
    expect(ruleKey({ "==": [{ var: "d" }, new Date(0)] })).toBeUndefined();
    expect(ruleKey({ "==": [{ var: "d" }, undefined] })).toBeUndefined();
    // eslint-disable-next-line no-sparse-arrays
    expect(ruleKey({ in: [1, [1, , 2]] })).toBeUndefined();
  });

  it("refuses holes and class instances, and takes null-prototype objects, on both paths (with and without a -0)", () => {
    for (const zero of [0, -0]) {
      // eslint-disable-next-line no-sparse-arrays
      expect(ruleKey({ in: [zero, [1, , 2]] })).toBeUndefined();
      expect(ruleKey({ "==": [zero, new Date(0)] })).toBeUndefined();
      expect(ruleKey({ "==": [zero, Object.assign(Object.create(null), { a: 1 })] })).toBe(
        `{"==":[${Object.is(zero, -0) ? "-0" : "0"},{"a":1}]}`,
      );
    }
  });
});

describe("$ref expansion bombs", () => {
  /** s0 is a test; s(i) references s(i-1) twice: fully expanded, s40 would be 2^40 copies of s0. */
  const bomb = (depth: number, op: "or" | "and") => {
    const segments: Record<string, object> = { s0: { "==": [{ var: "plan" }, "gold"] } };
    for (let i = 1; i <= depth; i++) segments[`s${i}`] = { [op]: [{ $ref: `s${i - 1}` }, { $ref: `s${i - 1}` }] };
    return env({
      segments: segments as Record<string, JsonValue>,
      flags: { f: { variants: { on: true, off: false }, defaultVariant: "off", targeting: { if: [{ $ref: `s${depth}` }, "on", null] } } },
    });
  };

  it.each(["or", "and"] as const)("compiles each segment once and evaluates in linear time (40 levels of %s)", (op) => {
    const { flags, errors } = compileEnvironment(bomb(40, op));
    expect(errors).toEqual([]);
    const f = flags.get("f")!;
    // Both outcomes: one short-circuits at every level, the other must visit both branches
    // (each segment is computed once per evaluation).
    expect(run(f, { plan: "gold" })).toMatchObject({ variant: "on", reason: "TARGETING_MATCH" });
    expect(run(f, { plan: "silver" })).toMatchObject({ variant: "off", reason: "DEFAULT" });
  });

  it("a segment used inside an iterator runs on the current item, as inlined text would", () => {
    const { flags, errors } = compileEnvironment(
      env({
        segments: { gold: { "==": [{ var: "plan" }, "gold"] } },
        flags: {
          f: {
            variants: { on: true, off: false },
            defaultVariant: "off",
            targeting: { if: [{ some: [{ var: "accounts" }, { $ref: "gold" }] }, "on", null] },
          },
        },
      }),
    );
    expect(errors).toEqual([]);
    expect(run(flags.get("f")!, { plan: "silver", accounts: [{ plan: "free" }, { plan: "gold" }] })).toMatchObject({ variant: "on" });
    expect(run(flags.get("f")!, { plan: "gold", accounts: [{ plan: "free" }] })).toMatchObject({ variant: "off" });
  });
});

describe("compiled metadata", () => {
  it("is the flag's own over the flag set's, frozen; flags with none at all share one object", () => {
    const variants = { on: true, off: false };
    const bare = compileEnvironment(env({ flags: { a: { variants }, b: { variants }, c: { variants, metadata: { team: "x" } } } })).flags;
    expect(bare.get("a")!.metadata).toEqual({});
    expect(bare.get("a")!.metadata).toBe(bare.get("b")!.metadata);
    expect(Object.isFrozen(bare.get("a")!.metadata)).toBe(true);
    expect(bare.get("c")!.metadata).toEqual({ team: "x" });
    const withSet = compileEnvironment(
      env({ metadata: { set: 1, team: "y" }, flags: { a: { variants }, c: { variants, metadata: { team: "x" } } } }),
    ).flags;
    expect(withSet.get("a")!.metadata).toEqual({ set: 1, team: "y" });
    expect(withSet.get("c")!.metadata).toEqual({ set: 1, team: "x" });
    expect(Object.isFrozen(withSet.get("c")!.metadata)).toBe(true);
  });
});

describe("a compile with the last one's memo", () => {
  const flagNamed = (defaultVariant: string) => ({
    state: "ENABLED" as const,
    variants: { on: true, off: false },
    defaultVariant,
    metadata: {},
    targeting: { if: [{ $ref: "beta" }, "on", null] },
  });
  const segments = { beta: { ends_with: [{ var: "email" }, "@example.com"] } };

  it("reuses the flags whose definition is the very object it compiled, unless a segment they use changed", () => {
    const last = env({ segments, flags: { a: flagNamed("off"), b: flagNamed("off"), c: flagNamed("off") } });
    const first = compileEnvironment(last);
    const next = { ...last, flags: { ...last.flags, c: flagNamed("on") } };
    const second = compileEnvironment(next, { previous: first.memo });
    expect(second.compiledFlags).toBe(1);
    expect([...second.flags.keys()]).toEqual(["a", "b", "c"]);
    expect(second.flags.get("a")).toBe(first.flags.get("a"));
    expect(run(second.flags.get("c")!, { email: "x@other.org" })).toMatchObject({ variant: "on", value: true, reason: "DEFAULT" });
    // A changed segment: the flags that use it are compiled again.
    const third = compileEnvironment(
      { ...next, segments: { beta: { ends_with: [{ var: "email" }, "@other.org"] } } },
      { previous: second.memo },
    );
    expect(third.compiledFlags).toBe(3);
    expect(run(third.flags.get("a")!, { email: "x@other.org" })).toMatchObject({ variant: "on" });
  });

  it("after a compile with a broken flag, compiles it again (its problem is reported again)", () => {
    const last = env({ segments, flags: { a: flagNamed("off"), bad: { ...flagNamed("off"), targeting: { nope: [] } } } });
    const first = compileEnvironment(last);
    expect([...first.broken.keys()]).toEqual(["bad"]);
    const second = compileEnvironment({ ...last, flags: { ...last.flags, a: flagNamed("on") } }, { previous: first.memo });
    expect(second.compiledFlags).toBe(2);
    expect(second.errors.map((e) => e.path.join("."))).toEqual(["flags.bad.targeting.nope"]);
  });
});
