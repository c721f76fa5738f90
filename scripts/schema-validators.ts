/**
 * Writes src/config/generated/schema-validators.ts: the validators of schema/flagserve.schema.json that the
 * loader uses, compiled by ajv ahead of time (ajv's standalone code), so that start-up and
 * `flagserve validate` run them without loading ajv's compiler or compiling the schema on every
 * start. test/config/schema-validators.test.ts fails when the file is not what this writes.
 *
 *   npm run generate:validators
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type Options } from "ajv";
import standaloneCode from "ajv/dist/standalone/index.js";
import { transformSync } from "esbuild";

export const SCHEMA_FILE = fileURLToPath(new URL("../schema/flagserve.schema.json", import.meta.url));
export const VALIDATORS_FILE = fileURLToPath(new URL("../src/config/generated/schema-validators.ts", import.meta.url));
/** The test files' schema (`flagserve test`), compiled the same way. */
export const TEST_SCHEMA_FILE = fileURLToPath(new URL("../schema/flagserve-test.schema.json", import.meta.url));
export const TEST_VALIDATORS_FILE = fileURLToPath(new URL("../src/testing/generated/schema-validators.ts", import.meta.url));

/** The parts of the schema checked at run time: export name -> its place in the schema. */
export const SCHEMA_PARTS = {
  environment: "#/definitions/environment", // one environment document
  flag: "#/definitions/flag", // merge.ts: each flag of a map...
  flagWithKey: "#/definitions/flagWithKey", // ...or of flagd's list form
  metadataValue: "#/definitions/metadata/additionalProperties",
  notification: "#/definitions/notification",
} as const;

export const AJV_OPTIONS: Options = {
  allErrors: true, // report every problem at once
  strict: true, // a typo in the schema itself fails loudly
  strictRequired: false, // the root `if` tests for `environments` without declaring it
  allowUnionTypes: true, // metadata values: string | number | boolean
  verbose: true, // errors carry their schema, for `patternErrorMessage` and allowed property names
  // The schema is checked against draft-07's meta-schema by its tests (test/config/schema.test.ts).
  validateSchema: false,
};

/** The schema in an ajv instance with the loader's options (and source code kept, when asked). */
export function schemaAjv(source = false, file = SCHEMA_FILE): Ajv {
  const ajv = new Ajv({ ...AJV_OPTIONS, ...(source ? { code: { source: true, esm: true } } : {}) });
  // Editor-only annotation (VS Code / yaml-language-server): known to ajv so strict mode accepts it.
  ajv.addVocabulary(["patternErrorMessage"]);
  ajv.addSchema(JSON.parse(readFileSync(file, "utf8")) as object, "flagserve");
  return ajv;
}

/** The text of src/config/generated/schema-validators.ts. */
export function validatorsSource(): string {
  const refs = Object.fromEntries(Object.entries(SCHEMA_PARTS).map(([name, ref]) => [name, `flagserve${ref}`]));
  return generated(schemaAjv(true), refs, "schema/flagserve.schema.json", "test/config/schema-validators.test.ts");
}

/** The text of src/testing/generated/schema-validators.ts: one validator, `testFile`. */
export const testValidatorsSource = (): string =>
  generated(
    schemaAjv(true, TEST_SCHEMA_FILE),
    { testFile: "flagserve" },
    "schema/flagserve-test.schema.json",
    "test/testing/test-flags.test.ts",
  );

function generated(ajv: Ajv, refs: Record<string, string>, from: string, checkedBy: string): string {
  const standalone = standaloneCode.default(ajv, refs).replace(/^"use strict";/, "");
  // ajv writes its code on one line; esbuild prints it again, a statement per line, to be read.
  const code = transformSync(standalone, { format: "esm", target: "node20", charset: "utf8" }).code;
  return [
    "/*",
    ` * GENERATED: do not edit. The validators of ${from} (ajv's standalone code),`,
    " * written by scripts/schema-validators.ts. After a change to the schema, run:",
    " *",
    " *   npm run generate:validators",
    " *",
    ` * ${checkedBy} fails when this file is not what that writes.`,
    " */",
    "// @ts-nocheck",
    // ajv's ESM output still `require`s its runtime helpers (ucs2length).
    'import { createRequire } from "node:module";',
    "const require = createRequire(import.meta.url);",
    code,
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(VALIDATORS_FILE, validatorsSource());
  writeFileSync(TEST_VALIDATORS_FILE, testValidatorsSource());
}
