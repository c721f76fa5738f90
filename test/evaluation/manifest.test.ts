/** The manifest as data: types, defaults, descriptions, the rule for several environments, and the file's text. */
import { describe, expect, it } from "vitest";
import { loadInlineConfig } from "../../src/config/index.js";
import { buildManifest, flagTypeOf, manifestEnvelope, manifestText, MANIFEST_SCHEMA_URL } from "../../src/evaluation/manifest.js";
import { expectValid, manifestSchema } from "../helpers/openfeature-cli.js";

/** Environments loaded as the server loads them (inline: validated and compiled like files). */
async function load(environments: Record<string, unknown>) {
  const loaded = await loadInlineConfig(environments);
  expect([...loaded.problems.values()].flat()).toEqual([]);
  return [...loaded.environments.values()];
}

const flag = (variants: Record<string, unknown>, defaultVariant: string | null, more: object = {}) => ({
  variants,
  defaultVariant,
  ...more,
});

describe("flagTypeOf", () => {
  it.each([
    [[true, false], "boolean"],
    [["a", "b"], "string"],
    [[1, 2, -3], "integer"],
    [[0.5, 1.5], "float"],
    [[1, 0.5], "float"],
    [[{ a: 1 }, [1]], "object"],
  ])("%j is %s", (values, type) => {
    expect(flagTypeOf(values)).toBe(type);
  });

  it("reports what it will not guess", () => {
    expect(flagTypeOf([true, "yes"])).toEqual({ problem: "its variants mix types (boolean, string)" });
    expect(flagTypeOf([])).toEqual({ problem: "it has no variants" });
  });
});

describe("buildManifest of one environment", () => {
  it("describes every flag, sorted, from its default variant and its own metadata.description", async () => {
    const [env] = await load({
      dev: {
        metadata: { description: "the flag set" },
        flags: {
          zeta: flag({ on: true, off: false }, "on", { metadata: { description: "Zeta", owner: "web" } }),
          alpha: flag({ s: 1, m: 2.5 }, "s", { state: "DISABLED" }),
          mid: flag({ a: { z: 1, y: [2] } }, "a", { metadata: { description: 7 } }),
        },
      },
    });
    const { manifest, problems, leftOut } = buildManifest([env!]);
    expect([problems, leftOut.size]).toEqual([[], 0]);
    expect(manifest).toEqual({
      $schema: MANIFEST_SCHEMA_URL,
      flags: {
        alpha: { flagType: "float", defaultValue: 1 },
        mid: { flagType: "object", defaultValue: { z: 1, y: [2] }, description: "7" },
        zeta: { flagType: "boolean", defaultValue: true, description: "Zeta" },
      },
    });
    expect(Object.keys(manifest!.flags)).toEqual(["alpha", "mid", "zeta"]);
    expectValid(manifestSchema, manifest);
  });

  it("reports a flag without a default variant, with what to do, where it is", async () => {
    const [env] = await load({ dev: { flags: { ok: flag({ a: "a" }, "a"), none: flag({ on: true, off: false }, null) } } });
    expect(buildManifest([env!])).toEqual({
      problems: [
        {
          kind: "no-default",
          environment: "dev",
          flag: "none",
          path: ["defaultVariant"],
          message: "flag 'none' has no defaultVariant, and the manifest needs its defaultValue: give it one of its variants (on, off)",
        },
      ],
      leftOut: new Map(),
    });
  });

  it("keeps a flag named __proto__", async () => {
    const [env] = await load({ dev: { flags: JSON.parse('{"__proto__": {"variants": {"a": "a"}, "defaultVariant": "a"}}') } });
    const { manifest } = buildManifest([env!]);
    expect(Object.keys(manifest!.flags)).toEqual(["__proto__"]);
    expect(manifestText(manifest!)).toContain('"__proto__": {\n      "defaultValue": "a",\n      "flagType": "string"\n    }');
  });
});

describe("buildManifest of several environments", () => {
  it("keeps the flags every environment defines alike, and names the others", async () => {
    const envs = await load({
      development: { flags: { shared: flag({ a: 1, b: 2 }, "a"), beta: flag({ on: true }, "on") } },
      production: { flags: { shared: flag({ a: 1, c: 0.5 }, "a"), legacy: flag({ x: "x" }, "x") } },
      staging: { flags: { shared: flag({ a: 1 }, "a"), beta: flag({ on: true }, "on") } },
    });
    const { manifest, problems, leftOut } = buildManifest(envs);
    expect(problems).toEqual([]);
    // Integer in two environments, float in one: float (as within one flag).
    expect(manifest!.flags).toEqual({ shared: { flagType: "float", defaultValue: 1 } });
    expect(leftOut).toEqual(
      new Map([
        ["beta", ["development", "staging"]],
        ["legacy", ["production"]],
      ]),
    );
  });

  it("reports each environment's say where they differ: type, else default value; description", async () => {
    const envs = await load({
      development: {
        flags: {
          checkout: flag({ on: true, off: false }, "on", { metadata: { description: "New checkout" } }),
          limit: flag({ a: 1 }, "a"),
        },
      },
      production: { flags: { checkout: flag({ on: true, off: false }, "off"), limit: flag({ a: "1" }, "a") } },
      staging: { flags: { checkout: flag({ on: true, off: false }, "off"), limit: flag({ a: "1" }, "a") } },
    });
    const { manifest, problems } = buildManifest(envs);
    expect(manifest).toBeUndefined();
    expect(problems.map((p) => [p.environment, p.path.join("."), p.message])).toEqual([
      ["development", "defaultVariant", "flag 'checkout': default value true here; false in production, staging"],
      ["production", "defaultVariant", "flag 'checkout': default value false here; true in development"],
      ["staging", "defaultVariant", "flag 'checkout': default value false here; true in development"],
      ["development", "metadata.description", `flag 'checkout': description "New checkout" here; none in production, staging`],
      ["production", "metadata.description", `flag 'checkout': description none here; "New checkout" in development`],
      ["staging", "metadata.description", `flag 'checkout': description none here; "New checkout" in development`],
      ["development", "variants", "flag 'limit': type integer here; string in production, staging"],
      ["production", "variants", "flag 'limit': type string here; integer in development"],
      ["staging", "variants", "flag 'limit': type string here; integer in development"],
    ]);
    expect(new Set(problems.map((p) => p.kind))).toEqual(new Set(["disagree"]));
  });
});

describe("manifestEnvelope", () => {
  it("lists the flags sorted by key, a missing default as null, as openfeature pull reads them", async () => {
    const [env] = await load({
      dev: { flags: { b: flag({ x: 1.5 }, "x", { metadata: { description: "B" } }), a: flag({ on: true }, null) } },
    });
    expect(manifestEnvelope(env!)).toEqual({
      flags: [
        { key: "a", type: "boolean", defaultValue: null },
        { key: "b", type: "float", description: "B", defaultValue: 1.5 },
      ],
    });
  });

  it("names the flags that answer PARSE_ERROR instead", async () => {
    const loaded = await loadInlineConfig({ dev: { flags: { ok: flag({ a: 1 }, "a"), bad: flag({ a: 1 }, "nope") } } });
    const env = loaded.environments.get("dev")!;
    expect(manifestEnvelope(env)).toEqual({ invalid: [{ flag: "bad", problem: expect.stringContaining("defaultVariant 'nope'") }] });
  });
});

describe("manifestText", () => {
  it("sorts every object's keys, indents by two and ends with a newline: equal data, equal text", async () => {
    const [first] = await load({ dev: { flags: { f: flag({ a: { b: 1, a: { d: 2, c: 3 } } }, "a") } } });
    const [second] = await load({ dev: { flags: { f: flag({ a: { a: { c: 3, d: 2 }, b: 1 } }, "a") } } });
    const text = manifestText(buildManifest([first!]).manifest!);
    expect(text).toBe(manifestText(buildManifest([second!]).manifest!));
    expect(text).toBe(
      [
        "{",
        `  "$schema": "${MANIFEST_SCHEMA_URL}",`,
        '  "flags": {',
        '    "f": {',
        '      "defaultValue": {',
        '        "a": {',
        '          "c": 3,',
        '          "d": 2',
        "        },",
        '        "b": 1',
        "      },",
        '      "flagType": "object"',
        "    }",
        "  }",
        "}",
        "",
      ].join("\n"),
    );
  });
});
