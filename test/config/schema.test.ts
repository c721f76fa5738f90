/** The published schema: what editors see is what the loader enforces. */
import { describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import { flagserveSchema } from "../../src/config/index.js";

// Editors use the schema as published (draft-07); check it without flagserve's own ajv set-up.
const validate = new Ajv({ allErrors: true, strict: false }).compile(flagserveSchema);

describe("flagserve.schema.json", () => {
  it("is draft-07 with titles and descriptions for autocompletion", () => {
    expect(flagserveSchema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    const defs = flagserveSchema.definitions as Record<string, { description?: string; title?: string }>;
    for (const name of ["environment", "flag", "state", "variants", "defaultVariant", "targeting", "notification"]) {
      expect(defs[name]?.description ?? defs[name]?.title, name).toBeTruthy();
    }
  });

  it("accepts one environment, an environments: file, and flagd's array form", () => {
    const env = { apiKey: "abcdefgh", flags: { a: { variants: { on: true }, defaultVariant: "on" } } };
    expect(validate(env)).toBe(true);
    expect(validate({ environments: { dev: env, "prod-eu.1": { flags: {} } } })).toBe(true);
    expect(validate({ $schema: "x", flags: [{ key: "a", state: "ENABLED", variants: { on: true } }] })).toBe(true);
    expect(validate({ $evaluators: { s: { "==": [1, 1] } }, segments: { t: true }, flags: {} })).toBe(true);
  });

  it("refuses what the loader refuses", () => {
    expect(validate({ flags: { a: { variants: { on: true, off: "no" } } } })).toBe(false); // mixed types
    expect(validate({ flags: { a: { variants: { on: true }, state: "on" } } })).toBe(false);
    expect(validate({ flags: { a: { variants: {} } } })).toBe(false);
    expect(validate({ flags: [{ variants: { on: true } }] })).toBe(false); // array form needs key
    expect(validate({ flags: {}, extra: 1 })).toBe(false);
    expect(validate({ environments: { dev: { flags: {} } }, flags: {} })).toBe(false);
    expect(validate({ environments: { "bad name": { flags: {} } } })).toBe(false);
    expect(validate({ flags: {}, notifications: [{ type: "slack" }] })).toBe(false);
    expect(validate({ flags: {}, notifications: [{ type: "slack", url: "u", events: ["flag-renamed"] }] })).toBe(false);
    expect(validate({ flags: {}, apiKey: "short" })).toBe(false);
  });
});
