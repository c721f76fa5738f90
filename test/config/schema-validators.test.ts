/**
 * The loader's schema validators are compiled ahead of time (src/config/generated/schema-validators.ts,
 * written by scripts/schema-validators.ts): the file must be what the schema gives today, and
 * its validators must answer exactly as ajv compiling the schema at run time does.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { schemaAjv, SCHEMA_PARTS, VALIDATORS_FILE, validatorsSource } from "../../scripts/schema-validators.js";
import { schemaPart, type SchemaPart } from "../../src/config/schema.js";

const flag = { state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off" };

/** Valid and invalid data for each part, many errors at once included. */
const CORPUS: Record<SchemaPart, unknown[]> = {
  environment: [
    { apiKey: "abcdefgh", flags: { a: flag } },
    { $schema: "x", flags: [{ key: "a", ...flag }] },
    { $evaluators: { s: { "==": [1, 1] } }, segments: { t: true }, flags: {}, metadata: { team: "web", v: 2, on: true } },
    { flags: { a: { variants: { on: true, off: "no" } } } },
    { flags: { a: { variants: {}, state: "on", targeting: [] } }, extra: 1, apiKey: "short" },
    { flags: [{ variants: { on: true } }, { key: 1 }], metadata: { deep: { no: 1 } } },
    { flags: {}, notifications: [{ type: "slack" }, { type: "slack", url: "u", events: ["flag-renamed"] }, "x"] },
    { environments: { "bad name": { flags: {} } } },
    "not an object",
    null,
  ],
  flag: [flag, { variants: { a: 1 }, defaultVariant: 2 }, { variants: { a: 1, b: "x" }, state: "OFF" }, []],
  flagWithKey: [{ key: "a", ...flag }, flag, { key: "", variants: {} }],
  metadataValue: ["x", 1, true, null, {}, []],
  notification: [{ type: "webhook", url: "http://127.0.0.1/x" }, { type: "slack", events: ["nope"] }, {}],
};

describe("schema-validators.ts", () => {
  it("is what scripts/schema-validators.ts writes from the schema (npm run generate:validators)", () => {
    expect(readFileSync(VALIDATORS_FILE, "utf8") === validatorsSource(), "run npm run generate:validators").toBe(true);
  });

  it("answers every part as ajv compiling the schema at run time does, errors included", () => {
    const ajv = schemaAjv();
    expect(Object.keys(CORPUS).sort()).toEqual(Object.keys(SCHEMA_PARTS).sort());
    let invalid = 0;
    for (const [part, ref] of Object.entries(SCHEMA_PARTS) as [SchemaPart, string][]) {
      const atRunTime = ajv.getSchema(`flagserve${ref}`)!;
      const ahead = schemaPart(part);
      for (const data of CORPUS[part]) {
        const valid = ahead(data);
        expect(valid, `${part}: ${JSON.stringify(data)}`).toBe(atRunTime(data));
        expect(ahead.errors ?? null).toEqual(atRunTime.errors ?? null);
        if (!valid) invalid++;
      }
    }
    expect(invalid).toBeGreaterThan(15);
  });
});
