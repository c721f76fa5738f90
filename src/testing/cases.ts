/**
 * Test files (`<environment>.test.yaml`, schema/flagserve-test.schema.json) -> test cases with
 * their file:line. Read with the `yaml` package like flag files (config/parse.ts), checked
 * against the published schema (compiled ahead of time, see scripts/schema-validators.ts).
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { ErrorObject, ValidateFunction } from "ajv";
import { parseYaml } from "../config/parse.js";
import { describeSchemaError, toJsonPath } from "../config/validate.js";
import { formatPath, problemAt, type Source } from "../config/positions.js";
import { isEnvironmentName } from "../config/schema.js";
import type { JsonPath, JsonValue, Problem } from "../model/types.js";
import * as compiled from "./generated/schema-validators.js";

const validateTestFile = compiled.testFile as unknown as ValidateFunction;

/**
 * The most checks one run makes (a check: one flag evaluated for one context of one case): a few
 * aliases can repeat a table of contexts into millions of checks, each costing time and memory.
 * A test file whose cases expand past it, or a run whose files do, is a problem (exit status 2).
 * Documented in docs/testing-flags.md.
 */
export const MAX_CHECKS = 100_000;

/** What a case expects; every field given must match. `errorCode: null`: the evaluation must succeed. */
export interface Expectation {
  variant?: string;
  value?: JsonValue;
  reason?: string;
  errorCode?: string | null;
}

/** One context a case evaluates, and where it is written. */
export interface CaseContext {
  context: Record<string, unknown>;
  line: number;
}

export interface TestCase {
  file: string;
  /** The line of the case (its `name`). */
  line: number;
  name: string;
  environment: string;
  /** Flag keys, or "*" for every flag of the environment. */
  flags: string[] | "*";
  /** Where the flag key(s) are written, for "unknown flag". */
  flagLine: number;
  contexts: CaseContext[];
  /** `$flagd.timestamp` in ms, when the case fixes it. */
  nowMs?: number;
  expect: Expectation;
}

export interface TestFile {
  file: string;
  environment: string;
  /** Where the environment is named (`environment:`), else 1: the file name names it. */
  environmentLine: number;
  cases: TestCase[];
}

export interface ParsedTestFile {
  testFile?: TestFile;
  problems: Problem[];
}

/** The contexts a test file's cases hold: a case's table counts each time an alias repeats it. */
export const contextCount = (testFile: TestFile | undefined): number => testFile?.cases.reduce((sum, c) => sum + c.contexts.length, 0) ?? 0;

/** `development.test.yaml` -> `development`; undefined when the name says no environment. */
export function environmentOfFileName(file: string): string | undefined {
  const match = /^(.*)\.test\.ya?ml$/i.exec(basename(file));
  return match && isEnvironmentName(match[1]!) ? match[1] : undefined;
}

/** Reads and parses a test file; `maxContexts` as for parseTestFile. */
export async function readTestFile(file: string, maxContexts = MAX_CHECKS): Promise<ParsedTestFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return {
      problems: [
        { file, line: 0, col: 0, message: `cannot read test file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` },
      ],
    };
  }
  return parseTestFile(file, text, maxContexts);
}

/**
 * The case of `value` (a test file's, not yet checked against the schema) from which its cases
 * hold more than `max` contexts (a table repeated by an alias counting each time), if any.
 */
function expandsPast(value: unknown, max: number): number | undefined {
  const tests = (value as { tests?: unknown } | null)?.tests;
  if (!Array.isArray(tests)) return undefined;
  let count = 0;
  for (let i = 0; i < tests.length; i++) {
    const rows = (tests[i] as { contexts?: unknown } | null)?.contexts;
    count += Array.isArray(rows) ? rows.length : 1;
    if (count > max) return i;
  }
  return undefined;
}

/**
 * A test file's cases, located; problems instead when it cannot be run as written, or when its
 * cases hold more than `maxContexts` contexts (MAX_CHECKS; less when other files of the run
 * hold some): then none is made.
 */
export function parseTestFile(file: string, text: string, maxContexts = MAX_CHECKS): ParsedTestFile {
  const parsed = parseYaml(file, text);
  const { source } = parsed;
  if (parsed.problems.length > 0 || !source) return { problems: parsed.problems };
  const value = parsed.value;
  // Counted before anything walks the cases: the schema check too would walk every repetition.
  const past = expandsPast(value, maxContexts);
  if (past !== undefined) {
    const message = `the cases expand past ${MAX_CHECKS} checks from here (a table of contexts counts each time an alias repeats it; a run makes at most ${MAX_CHECKS}${maxContexts < MAX_CHECKS ? `, and the files before this one hold ${MAX_CHECKS - maxContexts}` : ""}): split the file or use smaller tables`;
    return { problems: [problemAt(source, ["tests", past], message, "key")] };
  }
  if (!validateTestFile(value)) return { problems: schemaProblems(source, value, validateTestFile.errors ?? []) };
  const data = value as { environment?: string; tests: Record<string, unknown>[] };
  const environment = data.environment ?? environmentOfFileName(file);
  if (environment === undefined) {
    return {
      problems: [
        problemAt(source, [], "which environment? name it with `environment: NAME`, or name the file <environment>.test.yaml", "key"),
      ],
    };
  }
  const problems: Problem[] = [];
  const cases: TestCase[] = [];
  // The lines of each table, located once: a table an alias repeats is the same array, and
  // locating through an alias searches the whole document for its anchor.
  const tableLines = new Map<unknown[], number[]>();
  data.tests.forEach((raw, i) => {
    const at = (path: JsonPath, anchor: "key" | "value" = "key") => source.locate(["tests", i, ...path], anchor).line;
    const flags = typeof raw.flag === "string" ? [raw.flag] : (raw.flags as string[] | "*");
    const base = (raw.context ?? {}) as Record<string, unknown>;
    const rows = raw.contexts as Record<string, unknown>[] | undefined;
    let lines = rows && tableLines.get(rows);
    if (rows && !lines) tableLines.set(rows, (lines = rows.map((_, r) => at(["contexts", r], "value"))));
    const contexts = rows ? rows.map((row, r) => ({ context: { ...base, ...row }, line: lines![r]! })) : [{ context: base, line: at([]) }];
    let nowMs: number | undefined;
    if (raw.now !== undefined) {
      nowMs = typeof raw.now === "number" ? raw.now * 1000 : Date.parse(raw.now as string);
      if (!Number.isFinite(nowMs))
        problems.push(problemAt(source, ["tests", i, "now"], "now: must be an ISO 8601 date-time or Unix seconds"));
    }
    cases.push({
      file,
      line: at([]),
      name: raw.name as string,
      environment,
      flags,
      flagLine: at([raw.flag !== undefined ? "flag" : "flags"]),
      contexts,
      ...(nowMs !== undefined && { nowMs }),
      expect: raw.expect as Expectation,
    });
  });
  const environmentLine = data.environment === undefined ? 1 : source.locate(["environment"]).line;
  return problems.length > 0 ? { problems } : { testFile: { file, environment, environmentLine, cases }, problems: [] };
}

/** ajv's errors, located and said as a configuration's are (validate.ts); the `oneOf` of flag/flags said once, in words. */
function schemaProblems(source: Source, value: unknown, errors: readonly ErrorObject[]): Problem[] {
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const error of errors) {
    const path = toJsonPath(value, error.instancePath);
    const oneOfCase = error.keyword === "oneOf" && path[0] === "tests" && path.length === 2;
    // The alternatives' own errors repeat the `oneOf`'s (a case's flag/flags said once, in words).
    if (!oneOfCase && (["oneOf", "not", "const"].includes(error.keyword) || /\/oneOf\/\d+\/(required|not)/.test(error.schemaPath)))
      continue;
    const said = oneOfCase
      ? { path, message: 'give either `flag` (one key) or `flags` (a list, or "*" for all)' }
      : describeSchemaError(error, path);
    const where = formatPath(path);
    const text = where ? `${where}: ${said.message}` : said.message;
    const problem = problemAt(source, said.path, text, said.anchor ?? "value");
    const id = `${problem.line}:${problem.col}:${problem.message}`;
    if (!seen.has(id)) (problems.push(problem), seen.add(id));
  }
  return problems;
}
