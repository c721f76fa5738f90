import murmurhash from "murmurhash";
import { describe, expect, it } from "vitest";
import { bucketingHash, bucketOf, fractionalValue, parseDistribution } from "../../src/engine/fractional.js";
import { TargetingKeyMissingError } from "../../src/engine/errors.js";
import { murmur3Utf8Concat } from "../../src/engine/murmur.js";
import { compileFlag, errorOf, reasonOf, run, variantOf } from "./helpers.js";

const suits = { clubs: "clubs", diamonds: "diamonds", hearts: "hearts", spades: "spades" };
const quarter = (names: string[]) => names.map((n) => [n, 25]);

describe("bucketing hash (MurmurHash3 x86_32, seed 0, UTF-8)", () => {
  it("matches flagd's Go hashes", () => {
    expect(bucketingHash("jack")).toBe(3325854957);
    // UTF-8, not UTF-16 code units: JS flagd-core's imurmurhash gives 2573629365 here.
    expect(bucketingHash("café")).toBe(605818632);
    expect(bucketingHash("café")).not.toBe(2573629365);
    // MurmurHash3 of the UTF-8 bytes, as the murmurhash package computes it on Buffer.from's
    // encoding: every length modulo 4, two-, three- and four-byte characters, lone surrogates
    // (U+FFFD), and random strings of any UTF-16 code units.
    const fixed = [
      "",
      "a",
      "ab",
      "abc",
      "jack",
      "usér-96",
      "日本語",
      "👍🏽x",
      "\ud800",
      "\ud800x",
      "x\udc00",
      "\udbff\udfff",
      "k".repeat(5000),
      "é".repeat(2001),
    ];
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const units = () =>
      Array.from({ length: Math.floor(random() * 24) }, () =>
        String.fromCharCode(random() < 0.7 ? 32 + Math.floor(random() * 95) : Math.floor(random() * 0x10000)),
      ).join("");
    for (const value of [...fixed, ...Array.from({ length: 2000 }, units)]) {
      expect(bucketingHash(value), JSON.stringify(value)).toBe(murmurhash.v3(Buffer.from(value, "utf8"), 0));
    }
  });

  it("hashes a flag key and a targeting key as one string, without joining them", () => {
    const parts = [
      "",
      "a",
      "ab",
      "abc",
      "abcd",
      "abcde",
      "flag-007",
      "usér-96",
      "日本",
      "👍🏽",
      "\ud800",
      "x\udc00",
      "ab日",
      "abcdé",
      '{"context":{"targetingKey":"user-42"}}',
    ];
    for (const seed of [0, 3, 129]) {
      for (const a of parts) {
        for (const b of parts)
          expect(murmur3Utf8Concat(a, b, seed), JSON.stringify([a, b, seed])).toBe(murmurhash.v3(Buffer.from(a + b, "utf8"), seed));
      }
    }
    // A surrogate pair split between the two halves is still one character.
    expect(murmur3Utf8Concat("\ud83d", "\udc4d")).toBe(bucketingHash("👍"));
  });

  it("reproduces the testbed's hash-edge keys", () => {
    expect(bucketingHash("ejOoVL")).toBe(0);
    expect(bucketingHash("bY9fO-")).toBe(1);
    expect(bucketingHash("SI7p-")).toBe(2 ** 31 - 1);
    expect(bucketingHash("6LvT0")).toBe(2 ** 31);
    expect(bucketingHash("ceQdGm")).toBe(2 ** 32 - 1);
  });
});

describe("bucketOf = (hash * total) >>> 32, exactly", () => {
  const exact = (h: number, t: number) => Number((BigInt(h) * BigInt(t)) >> 32n);

  it("agrees with BigInt arithmetic at the extremes", () => {
    const hashes = [0, 1, 0xffff, 0x10000, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1];
    const totals = [1, 2, 3, 100, 65535, 65536, 1_000_003, 2 ** 31 - 2, 2 ** 31 - 1];
    for (const h of hashes) for (const t of totals) expect(bucketOf(h, t)).toBe(exact(h, t));
  });

  it("agrees with BigInt arithmetic on pseudo-random inputs", () => {
    let seed = 12345;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (let i = 0; i < 20_000; i++) {
      const h = next();
      const t = (next() % (2 ** 31 - 1)) + 1;
      expect(bucketOf(h, t)).toBe(exact(h, t));
    }
  });

  it("differs from naive floating-point multiplication where that loses precision", () => {
    // h * t = 2^32 * 1073741824 - 1 exactly; as a double the product rounds up to the next
    // multiple of 2^32, so the naive bucket is one too high.
    const h = 2 ** 31 + 1;
    const t = 2 ** 31 - 1;
    expect(Math.floor((h * t) / 2 ** 32)).toBe(1073741824);
    expect(bucketOf(h, t)).toBe(1073741823);
  });
});

describe("testbed fractional vectors (v2)", () => {
  const fractionalFlag = compileFlag("fractional-flag", {
    variants: suits,
    defaultVariant: null,
    targeting: {
      fractional: [{ cat: [{ var: "$flagd.flagKey" }, { var: "user.name" }] }, ...quarter(Object.keys(suits))],
    },
  });

  it.each([
    ["jack", "hearts"],
    ["queen", "spades"],
    ["ten", "clubs"],
    ["nine", "diamonds"],
    ["3", "clubs"],
  ])("fractional-flag: %s -> %s", (name, expected) => {
    const e = run(fractionalFlag, { user: { name } });
    expect(variantOf(e)).toBe(expected);
    expect(reasonOf(e)).toBe("SPLIT");
  });

  const shorthand = compileFlag("fractional-flag-shorthand", {
    variants: { heads: "heads", tails: "tails", draw: "draw" },
    defaultVariant: "draw",
    targeting: { fractional: [["heads"], ["tails", 1]] },
  });

  it.each([
    ["jon@company.com", "heads"],
    ["jane@company.com", "tails"],
  ])("fractional-flag-shorthand: %s -> %s", (targetingKey, expected) => {
    expect(variantOf(run(shorthand, { targetingKey }))).toBe(expected);
  });

  const sharedSeed = (key: string, prefix: string) =>
    compileFlag(key, {
      variants: Object.fromEntries(Object.keys(suits).map((s) => [`${prefix}${s}`, `${prefix}${s}`])),
      targeting: {
        fractional: [{ cat: ["shared-seed", { var: "user.name" }] }, ...quarter(Object.keys(suits).map((s) => `${prefix}${s}`))],
      },
    });
  const flagA = sharedSeed("fractional-flag-A-shared-seed", "");
  const flagB = sharedSeed("fractional-flag-B-shared-seed", "ace-of-");

  it.each([
    ["seven", "hearts"],
    ["eight", "diamonds"],
    ["nine", "clubs"],
    ["two", "spades"],
  ])("shared seed: %s -> %s in both flags", (name, expected) => {
    expect(variantOf(run(flagA, { user: { name } }))).toBe(expected);
    expect(variantOf(run(flagB, { user: { name } }))).toBe(`ace-of-${expected}`);
  });

  const edge = compileFlag("fractional-hash-edge-flag", {
    variants: { lower: "lower", upper: "upper" },
    targeting: { fractional: [{ var: "targetingKey" }, ["lower", 50], ["upper", 50]] },
  });

  it.each([
    ["ejOoVL", "lower"],
    ["bY9fO-", "lower"],
    ["SI7p-", "lower"],
    ["6LvT0", "upper"],
    ["ceQdGm", "upper"],
  ])("hash edge: %s -> %s", (targetingKey, expected) => {
    expect(variantOf(run(edge, { targetingKey }))).toBe(expected);
  });

  it("hashes UTF-8 bytes of the bucketing value", () => {
    // hash("café") = 605818632; with weights [1,1] the bucket is hash*2 >>> 32 = 0 (605818632 < 2^31).
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b" },
      targeting: { fractional: ["café", ["a", 1], ["b", 1]] },
    });
    expect(variantOf(run(flag))).toBe("a");
    // hash("jack") = 3325854957 >= 2^31: upper half.
    const jack = compileFlag("f", {
      variants: { a: "a", b: "b" },
      targeting: { fractional: ["jack", ["a", 1], ["b", 1]] },
    });
    expect(variantOf(run(jack))).toBe("b");
  });
});

describe("fractional distribution rules", () => {
  const data = { targetingKey: "user-1", $flagd: { flagKey: "k" } };

  it("counts a missing or null weight as 1", () => {
    expect(parseDistribution([["a"], ["b", null], ["c", 3]])).toEqual({
      variants: ["a", "b", "c"],
      ends: [1, 2, 5],
      total: 5,
    });
  });

  it("clamps negative weights to 0", () => {
    expect(
      parseDistribution([
        ["one", -5],
        ["two", 10],
      ])?.ends,
    ).toEqual([0, 10]);
    // "one" owns no bucket at all, whatever the key.
    for (const targetingKey of ["a", "b", "c", "d", "e", "ejOoVL"]) {
      expect(
        fractionalValue(
          [
            ["one", -50],
            ["two", 50],
          ],
          { ...data, targetingKey },
        ),
      ).toBe("two");
    }
  });

  it.each([
    [
      "non-integer weight",
      [
        ["a", 1.5],
        ["b", 1],
      ],
    ],
    [
      "string weight",
      [
        ["a", "1"],
        ["b", 1],
      ],
    ],
    [
      "sum over 2^31-1",
      [
        ["a", 2 ** 31 - 1],
        ["b", 1],
      ],
    ],
    ["single weight over 2^31-1", [["a", 2 ** 31]]],
    [
      "all-zero weights",
      [
        ["a", 0],
        ["b", 0],
      ],
    ],
    ["entry not an array", [["b", 1], 5]],
    ["empty entry", [[], ["b", 1]]],
    ["object variant", [[{ a: 1 }, 1]]],
  ])("returns null on %s", (_name, entries) => {
    expect(fractionalValue(entries as unknown[], data)).toBeNull();
  });

  it("accepts the maximum total and a single entry", () => {
    expect(
      fractionalValue(
        [
          ["a", 2 ** 31 - 2],
          ["b", 1],
        ],
        data,
      ),
    ).not.toBeNull();
    expect(fractionalValue([["single", 1]], data)).toBe("single");
    expect(fractionalValue([["single"]], data)).toBe("single");
  });

  it("returns string, boolean, number or null variants as they are", () => {
    expect(fractionalValue([[true, 1]], data)).toBe(true);
    expect(fractionalValue([[7, 1]], data)).toBe(7);
    expect(fractionalValue([[null, 1]], data)).toBeNull();
  });

  it("hashes flagKey + targetingKey without a bucketing value, the bare string with one", () => {
    // Same targetingKey, different flag keys: the key is salted by the flag key...
    const implicit = (flagKey: string) =>
      fractionalValue(
        [
          ["a", 1],
          ["b", 1],
        ],
        { targetingKey: "jack", $flagd: { flagKey } },
      );
    // ..."" + "jack" hashes like the explicit "jack" (upper half, see above).
    expect(implicit("")).toBe("b");
    expect(fractionalValue(["jack", ["a", 1], ["b", 1]], { targetingKey: "zzz", $flagd: { flagKey: "x" } })).toBe("b");
    // "caf" + "é" is the UTF-8 string "café" (lower half).
    expect(
      fractionalValue(
        [
          ["a", 1],
          ["b", 1],
        ],
        { targetingKey: "é", $flagd: { flagKey: "caf" } },
      ),
    ).toBe("a");
  });

  it("drops a null bucketing value and falls back to the targetingKey", () => {
    expect(fractionalValue([null, ["a", 1], ["b", 1]], { targetingKey: "jack", $flagd: { flagKey: "" } })).toBe("b");
  });

  it.each([
    ["missing", {}],
    ["null", { targetingKey: null }],
    ["empty", { targetingKey: "" }],
    ["a number", { targetingKey: 42 }],
    ["a boolean", { targetingKey: true }],
  ])("targetingKey %s: the shorthand throws TargetingKeyMissingError, a null bucketing value gives null", (_n, ctx) => {
    expect(() =>
      fractionalValue(
        [
          ["a", 1],
          ["b", 1],
        ],
        { ...ctx, $flagd: { flagKey: "k" } },
      ),
    ).toThrow(TargetingKeyMissingError);
    expect(fractionalValue([null, ["a", 1]], { ...ctx, $flagd: { flagKey: "k" } })).toBeNull();
  });

  it("a bucketing value that is neither a string nor null gives null, as in flagd", () => {
    expect(fractionalValue([42, ["a", 1]], { targetingKey: "u", $flagd: { flagKey: "k" } })).toBeNull();
    expect(fractionalValue([{ x: 1 }, ["a", 1]], { targetingKey: "u", $flagd: { flagKey: "k" } })).toBeNull();
  });

  it("does not need a targetingKey when the bucketing value is a string (even empty)", () => {
    expect(fractionalValue(["", ["a", 1]], {})).toBe("a");
  });
});

describe("fractional inside rules", () => {
  it("evaluates nested expressions in variants and weights", () => {
    const flag = compileFlag("f", {
      variants: { premium: "premium", standard: "standard", red: "red", blue: "blue" },
      targeting: {
        fractional: [
          { var: "email" },
          [{ if: [{ "==": [{ var: "tier" }, "premium"] }, "premium", "standard"] }, 50],
          // weight 0 for basic users, 50 otherwise
          ["red", { if: [{ "==": [{ var: "tier" }, "basic"] }, 0, 50] }],
        ],
      },
    });
    // with a "basic" tier the second entry has weight 0: everything lands in the first.
    for (const email of ["a@x", "b@x", "c@x", "d@x", "jon@company.com"]) {
      expect(variantOf(run(flag, { email, tier: "basic" }))).toBe("standard");
    }
    const picks = new Set(
      ["a@x", "b@x", "c@x", "d@x", "e@x", "f@x", "g@x", "h@x"].map((email) => variantOf(run(flag, { email, tier: "premium" }))),
    );
    expect(picks).toEqual(new Set(["premium", "red"]));
  });

  it("supports time-based weights over $flagd.timestamp", () => {
    // Before t=1000 everyone is "old"; after it everyone is "new".
    const flag = compileFlag("f", {
      variants: { old: "old", new: "new" },
      targeting: {
        fractional: [
          ["old", { if: [{ "<": [{ var: "$flagd.timestamp" }, 1000] }, 1, 0] }],
          ["new", { if: [{ "<": [{ var: "$flagd.timestamp" }, 1000] }, 0, 1] }],
        ],
      },
    });
    expect(variantOf(run(flag, { targetingKey: "u" }, 999_999))).toBe("old");
    expect(variantOf(run(flag, { targetingKey: "u" }, 1_000_000))).toBe("new");
  });

  it("a bucketing value that evaluates to null, without a targetingKey: the default variant, DEFAULT", () => {
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b", fallback: "fallback" },
      defaultVariant: "fallback",
      targeting: { fractional: [{ var: "missing_key" }, ["a", 50], ["b", 50]] },
    });
    expect(run(flag, {})).toMatchObject({ variant: "fallback", value: "fallback", reason: "DEFAULT" });
    // with a targetingKey the null value is dropped and flagKey + targetingKey is hashed
    expect(reasonOf(run(flag, { targetingKey: "u" }))).toBe("SPLIT");
  });

  it("fails with TARGETING_KEY_MISSING (not DEFAULT) when the shorthand has no targetingKey", () => {
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b" },
      defaultVariant: "a",
      targeting: {
        fractional: [
          ["a", 50],
          ["b", 50],
        ],
      },
    });
    const e = run(flag, {});
    expect(errorOf(e)).toBe("TARGETING_KEY_MISSING");
    expect("value" in e).toBe(false);
    expect(e.metadata).toEqual({});
    expect(reasonOf(run(flag, { targetingKey: "u" }))).toBe("SPLIT");
  });

  it("does not need a key when the fractional branch is not taken", () => {
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b", c: "c" },
      targeting: {
        if: [
          { var: "beta" },
          {
            fractional: [
              ["a", 1],
              ["b", 1],
            ],
          },
          "c",
        ],
      },
    });
    expect(run(flag, {})).toMatchObject({ variant: "c", reason: "TARGETING_MATCH" });
    expect(errorOf(run(flag, { beta: true }))).toBe("TARGETING_KEY_MISSING");
    expect(reasonOf(run(flag, { beta: true, targetingKey: "u" }))).toBe("SPLIT");
  });

  it("all-zero weights give null, i.e. DEFAULT", () => {
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b", fallback: "fallback" },
      defaultVariant: "fallback",
      targeting: {
        fractional: [
          ["a", 0],
          ["b", 0],
        ],
      },
    });
    expect(run(flag, { targetingKey: "u" })).toMatchObject({ variant: "fallback", reason: "DEFAULT" });
  });

  it("as a condition: the rule's result is not the fractional's, so TARGETING_MATCH", () => {
    const flag = compileFlag("f", {
      variants: { hundreds: 100, ones: 1 },
      targeting: {
        if: [
          {
            fractional: [
              [false, 0],
              [true, 100],
            ],
          },
          "hundreds",
          "ones",
        ],
      },
    });
    expect(run(flag, { targetingKey: "u" })).toMatchObject({ variant: "hundreds", value: 100, reason: "TARGETING_MATCH" });
    const falseFlag = compileFlag("f", {
      variants: { hundreds: 100, ones: 1 },
      targeting: {
        if: [
          {
            fractional: [
              [false, 100],
              [true, 0],
            ],
          },
          "hundreds",
          "ones",
        ],
      },
    });
    expect(run(falseFlag, { targetingKey: "u" })).toMatchObject({ variant: "ones", reason: "TARGETING_MATCH" });
  });

  it('boolean variants chosen by fractional map to the "true"/"false" keys with SPLIT', () => {
    const flag = compileFlag("f", {
      variants: { true: true, false: false },
      targeting: { fractional: [[true, 1]] },
    });
    expect(run(flag, { targetingKey: "u" })).toMatchObject({ variant: "true", value: true, reason: "SPLIT" });
  });

  it("finds the evaluation data inside iterators", () => {
    const flag = compileFlag("f", {
      variants: { a: "a", b: "b" },
      targeting: { if: [{ some: [[1], { "==": [{ fractional: [["a", 1]] }, "a"] }] }, "b", "a"] },
    });
    expect(run(flag, { targetingKey: "u" })).toMatchObject({ variant: "b", reason: "TARGETING_MATCH" });
    expect(errorOf(run(flag, {}))).toBe("TARGETING_KEY_MISSING");
  });

  it("answers as the generic operator when its entries are constants (compiled once)", () => {
    const entries = [
      ["a", 30],
      ["b", 0],
      ["c", null],
      ["d", 69],
    ];
    const rules: Record<string, object> = {
      shorthand: { fractional: entries },
      byValue: { fractional: [{ var: "bucket" }, ...entries] },
      byLiteral: { fractional: ["fixed", ...entries] },
      byNull: { fractional: [null, ...entries] },
      unparsable: {
        fractional: [
          ["a", 1.5],
          ["b", 1],
        ],
      },
      unparsableByValue: { fractional: [{ var: "bucket" }, ["a", "x"]] },
      // flagd's documented form, and cats of other lengths and parts (numbers, null, objects).
      byCat: { fractional: [{ cat: [{ var: "$flagd.flagKey" }, { var: "bucket" }] }, ...entries] },
      byCatOfOne: { fractional: [{ cat: [{ var: "bucket" }] }, ...entries] },
      byCatOfThree: { fractional: [{ cat: [{ var: "bucket" }, "-", { var: "targetingKey" }] }, ...entries] },
    };
    const variants = { a: "a", b: "b", c: "c", d: "d", fallback: "fallback" };
    const contexts: Record<string, unknown>[] = [
      {},
      { targetingKey: "" },
      { targetingKey: 7 },
      { bucket: 42 },
      { bucket: null, targetingKey: "k" },
    ];
    for (let i = 0; i < 200; i++) contexts.push({ targetingKey: `user-${i}`, ...(i % 3 === 0 && { bucket: `b${i}` }) });
    // A bucketing expression that evaluates to an array is one more entry, not a bucketing value.
    contexts.push(
      { bucket: ["a", 1], targetingKey: "u" },
      { bucket: ["a", 1] },
      { bucket: { x: 1 }, targetingKey: "u" },
      { bucket: "usér-7" },
    );
    // The test's own reading of an argument: `var` (a path), and `cat` as compiled: '' + a + b...
    const valueOf = (arg: unknown, data: Record<string, unknown>): unknown => {
      if (arg === null || typeof arg !== "object" || Array.isArray(arg)) return arg;
      if ("var" in arg)
        return (
          String(arg.var)
            .split(".")
            .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], data) ?? null
        );
      return (arg as { cat: unknown[] }).cat.reduce<string>((text, part) => text + (valueOf(part, data) as string), "");
    };
    for (const [key, targeting] of Object.entries(rules)) {
      const flag = compileFlag(key, { variants, defaultVariant: "fallback", targeting });
      const [op] = Object.values(targeting) as unknown[][];
      for (const context of contexts) {
        const data = { ...context, $flagd: { flagKey: key, timestamp: 0 } };
        const args = op!.map((arg) => valueOf(arg, data));
        let expected: string;
        try {
          const value = fractionalValue(args, data);
          expected = value === null ? "DEFAULT fallback" : `SPLIT ${String(value)}`;
        } catch (err) {
          expected = err instanceof TargetingKeyMissingError ? "TARGETING_KEY_MISSING" : "?";
        }
        const e = run(flag, context);
        expect(errorOf(e) ?? `${reasonOf(e)} ${variantOf(e)}`, `${key} ${JSON.stringify(context)}`).toBe(expected);
      }
    }
  });

  it("keeps concurrent-looking evaluations independent", () => {
    const split = compileFlag("s", {
      variants: { a: "a", b: "b" },
      targeting: { fractional: [["a", 1]] },
    });
    const plain = compileFlag("p", { variants: { a: "a", b: "b" }, targeting: { if: [true, "a"] } });
    expect(reasonOf(run(split, { targetingKey: "u" }))).toBe("SPLIT");
    // A previous evaluation's fractional must not leak into this one.
    expect(reasonOf(run(plain, { targetingKey: "u" }))).toBe("TARGETING_MATCH");
  });
});
