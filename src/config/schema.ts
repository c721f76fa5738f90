/**
 * The published JSON Schema (schema/flagserve.schema.json) compiled once. The same file serves
 * editors and the loader, so what autocompletion accepts is what flagserve accepts.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";

/** Absolute path of the schema file (it ships in the package beside src/ and dist/). */
export const SCHEMA_PATH = fileURLToPath(new URL("../../schema/flagserve.schema.json", import.meta.url));

export const flagserveSchema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8")) as Record<string, unknown>;

const ajv = new Ajv({
  allErrors: true, // report every problem at once
  strict: true, // a typo in the schema itself fails loudly
  strictRequired: false, // the root `if` tests for `environments` without declaring it
  allowUnionTypes: true, // metadata values: string | number | boolean
  verbose: true, // errors carry their schema, for `patternErrorMessage` and allowed property names
  // Checking the schema against draft-07's meta-schema compiles that too, on every start; the
  // schema is a file of this package, checked against it by its tests (test/config/schema.test.ts).
  validateSchema: false,
});
// Editor-only annotation (VS Code / yaml-language-server): known to ajv so strict mode accepts it.
ajv.addVocabulary(["patternErrorMessage"]);
ajv.addSchema(flagserveSchema, "flagserve");

/** The validator of one part of the schema: a type guard for T, the type that part describes. */
export const schemaPart = <T = unknown>(ref: string): ValidateFunction<T> => {
  const fn = ajv.getSchema<T>(`flagserve${ref}`);
  if (!fn) throw new Error(`schema definition ${ref} is missing`);
  return fn;
};

/** One environment document (a standalone file, a subdirectory's file, an `environments:` entry). */
export const validateEnvironmentSchema = schemaPart("#/definitions/environment");

const nameRule = (flagserveSchema.definitions as Record<string, Record<string, string>>).environmentName ?? {};
const ENVIRONMENT_NAME = new RegExp(nameRule.pattern ?? "^$");

/** Environment names become part of generated keys (`fs_<env>_...`) and log lines: keep them plain. */
export const isEnvironmentName = (name: string): boolean => ENVIRONMENT_NAME.test(name);

export const ENVIRONMENT_NAME_RULE = nameRule.patternErrorMessage ?? "";
