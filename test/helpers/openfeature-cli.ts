/** The OpenFeature CLI's own descriptions of its manifest and API (test/fixtures/openfeature-cli), as ajv validators. */
import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import { expect } from "vitest";
import { parse } from "yaml";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openfeature-cli/${name}`, import.meta.url), "utf8");

/** The manifest's JSON Schema (draft-07 with `$defs`; its `flag` has `required` without `type`, which strict types refuse). */
export const manifestSchema = new Ajv({ allErrors: true, strictTypes: false }).compile(JSON.parse(fixture("flag-manifest.schema.json")));

export const sampleManifest = (): unknown => JSON.parse(fixture("sample-manifest.json"));

/** A schema of the API's OpenAPI description: its `components`, read as JSON Schema (`nullable` is ajv's own keyword). */
export const apiSchema = (() => {
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajv.addVocabulary(["components", "example"]);
  ajv.addSchema({ $id: "sync-api", components: (parse(fixture("sync-api.yaml")) as { components: unknown }).components });
  return (name: "ManifestEnvelope" | "ErrorResponse"): ValidateFunction => ajv.getSchema(`sync-api#/components/schemas/${name}`)!;
})();

/** Expects `value` to pass `validate`, showing ajv's errors when it does not. */
export function expectValid(validate: ValidateFunction, value: unknown): void {
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
}
