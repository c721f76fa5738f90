/**
 * The published JSON Schema (schema/flagserve.schema.json). The same file serves editors and the
 * loader, so what autocompletion accepts is what flagserve accepts.
 */
import { readFileSync } from "node:fs";
import type { ValidateFunction } from "ajv";
import * as compiled from "./generated/schema-validators.js";

/** The schema file: it ships in the package beside src/ and dist/. */
const SCHEMA_URL = new URL("../../schema/flagserve.schema.json", import.meta.url);
export const flagserveSchema = JSON.parse(readFileSync(SCHEMA_URL, "utf8")) as Record<string, unknown>;

/** The parts of the schema with a validator (see scripts/schema-validators.ts). */
export type SchemaPart = keyof typeof compiled;

/**
 * The validator of one part of the schema: a type guard for T, the type that part describes.
 * Compiled by ajv ahead of time (checked against the schema by test/config/schema-validators.test.ts),
 * so no start pays for ajv's compiler: same options, same errors.
 */
export const schemaPart = <T = unknown>(part: SchemaPart): ValidateFunction<T> => compiled[part] as unknown as ValidateFunction<T>;

/** One environment document (a standalone file, a subdirectory's file, an `environments:` entry). */
export const validateEnvironmentSchema = schemaPart("environment");

const nameRule = (flagserveSchema.definitions as Record<string, Record<string, string>>).environmentName ?? {};
const ENVIRONMENT_NAME = new RegExp(nameRule.pattern ?? "^$");

/** Environment names become part of generated keys (`fs_<env>_...`) and log lines: keep them plain. */
export const isEnvironmentName = (name: string): boolean => ENVIRONMENT_NAME.test(name);

export const ENVIRONMENT_NAME_RULE = nameRule.patternErrorMessage ?? "";
