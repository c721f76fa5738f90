/**
 * Running test cases: each case's flags evaluated for each of its contexts by the server's own
 * path (the OFREP context rules, `--context-value` enrichment, overrides, the engine), and the
 * answer compared with what the case expects.
 */
import type { ConfigLoad, LoadedEnvironment } from "../config/index.js";
import { evaluate } from "../engine/index.js";
import { isEvaluationError, type CompiledFlag, type Evaluation } from "../engine/types.js";
import { contextFromBody } from "../evaluation/context.js";
import { ApiError } from "../evaluation/problem.js";
import { createEnricher } from "../fixture/enrich.js";
import { OverrideLayer } from "../admin/overrides.js";
import { silentLogger } from "../log/logger.js";
import { canonicalJson } from "../model/json.js";
import type { JsonValue, Problem } from "../model/types.js";
import { MAX_CHECKS, type Expectation, type TestCase, type TestFile } from "./cases.js";
import { CoverageTracker, type EnvironmentCoverage } from "./coverage.js";

/** What a flag answered: the fields of the OFREP body a case can expect. */
export interface Answer {
  value?: JsonValue;
  variant?: string;
  reason?: string;
  errorCode?: string;
  errorDetails?: string;
}

/** One flag evaluated for one context of one case. */
export interface CaseResult {
  file: string;
  /** The case's line; `contextLine`: the table row's, when the case has a table of contexts. */
  line: number;
  contextLine: number;
  name: string;
  environment: string;
  flag: string;
  context: Record<string, unknown>;
  expected: Expectation;
  actual: Answer;
  passed: boolean;
  /** The expected fields that did not match. */
  mismatches: (keyof Expectation)[];
}

export interface CoverageSummary {
  branches: number;
  reached: number;
  /** reached / branches, in percent (100 when there are no branches). */
  percent: number;
  environments: EnvironmentCoverage[];
}

export interface TestReport {
  passed: number;
  failed: number;
  /** Every check's result, in order; empty when they were handed to `onResult` instead. */
  results: CaseResult[];
  /** Test files that cannot be run as written, and cases naming what does not exist: exit status 2. */
  problems: Problem[];
  /** Problems of the configuration in the tested environments (a broken flag answers PARSE_ERROR). */
  configProblems: Problem[];
  coverage?: CoverageSummary;
}

export interface RunOptions {
  /** Static context values (`--context-value`), over each case's context as the server adds them. */
  contextValues?: Record<string, string>;
  /** An overrides file (`--overrides`), applied as the server applies it (read only). */
  overridesFile?: string;
  /** Measure rule coverage (an instrumented compile of each tested environment). */
  coverage?: boolean;
  /** Only the cases of these flags, by environment (`flagserve diff --tests`); others are skipped. */
  onlyFlags?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Each check's result as it is made, instead of keeping them in the report (which then holds
   * the counts alone): a reporter writes them as they come, and a run holds none. A promise
   * returned (the output is full) is waited for before the next check.
   */
  onResult?: (result: CaseResult) => void | Promise<void>;
  /** The most checks the run makes (MAX_CHECKS): past it, a problem at the case it stopped at, and no more. */
  maxChecks?: number;
}

const NO_HEADERS = { get: () => null };

/** Runs the cases of `files` against the environments of `load`. */
export async function runTests(load: ConfigLoad, files: readonly TestFile[], options: RunOptions = {}): Promise<TestReport> {
  const report: TestReport = { passed: 0, failed: 0, results: [], problems: [], configProblems: [] };
  const enrich = createEnricher({ values: options.contextValues ?? {} });
  const overrides = await overrideLayer(options.overridesFile);
  const trackers = new Map<string, CoverageTracker>();
  const tested = new Set<string>();
  const maxChecks = options.maxChecks ?? MAX_CHECKS;
  const keep = options.onResult ?? ((result: CaseResult) => void report.results.push(result));
  let checks = 0;

  run: for (const file of files) {
    const env = file.environment;
    const loaded = load.environments.get(env);
    if (!loaded) {
      const why = load.problems.has(env)
        ? `environment '${env}' cannot be loaded (see flagserve validate)`
        : `unknown environment '${env}' (known: ${[...load.environments.keys()].join(", ") || "none"})`;
      report.problems.push({ file: file.file, line: file.environmentLine, col: 1, message: why });
      continue;
    }
    if (!tested.has(env)) {
      tested.add(env);
      report.configProblems.push(...(load.problems.get(env) ?? []));
    }
    const environment = overrides ? overrides.apply(loaded) : loaded;
    let flags: ReadonlyMap<string, CompiledFlag> = environment.flags;
    let tracker: CoverageTracker | undefined;
    if (options.coverage) {
      tracker = trackers.get(env) ?? new CoverageTracker(environment.config);
      trackers.set(env, tracker);
      flags = withInstrumented(environment, tracker);
    }
    const only = options.onlyFlags ? (options.onlyFlags.get(env) ?? new Set<string>()) : undefined;
    for (const testCase of file.cases) {
      const keys = testCase.flags === "*" ? [...flags.keys()] : testCase.flags;
      for (const key of keys) {
        if (only && !only.has(key)) continue;
        const flag = flags.get(key);
        if (!flag) {
          report.problems.push({
            file: testCase.file,
            line: testCase.flagLine,
            col: 1,
            message: `case "${testCase.name}": unknown flag '${key}' in environment '${env}'`,
          });
          continue;
        }
        for (const { context, line } of testCase.contexts) {
          if (checks++ === maxChecks) {
            report.problems.push({
              file: testCase.file,
              line: testCase.line,
              col: 1,
              message: `case "${testCase.name}": the test files expand past ${maxChecks} checks here (cases x contexts x flags; a run makes at most ${maxChecks}); the run stopped: split the files or use smaller tables`,
            });
            break run;
          }
          const result = runOne(testCase, flag, context, enrich, tracker);
          const full = keep({ ...result, contextLine: line });
          if (full) await full;
          if (result.passed) report.passed++;
          else report.failed++;
        }
      }
    }
  }
  if (options.coverage) report.coverage = await coverageOf(trackers, options.onlyFlags);
  return report;
}

/** The served flags, with the instrumented compile's in place of those it has (overridden flags keep no targeting). */
function withInstrumented(environment: LoadedEnvironment, tracker: CoverageTracker): Map<string, CompiledFlag> {
  const flags = new Map(environment.flags);
  for (const [key, flag] of tracker.flags) if (Object.hasOwn(environment.config.flags, key)) flags.set(key, flag);
  return flags;
}

function runOne(
  testCase: TestCase,
  flag: CompiledFlag,
  context: Record<string, unknown>,
  enrich: ReturnType<typeof createEnricher>,
  tracker: CoverageTracker | undefined,
): Omit<CaseResult, "contextLine"> {
  let actual: Answer;
  try {
    const attributes = contextFromBody({ context });
    const evaluation = evaluate(flag, enrich ? enrich(attributes, NO_HEADERS) : attributes, testCase.nowMs ?? Date.now());
    tracker?.record(flag.key, evaluation);
    actual = answerOf(evaluation);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const { errorCode, errorDetails } = error.data as { errorCode: string; errorDetails: string };
    actual = { errorCode, errorDetails };
  }
  const mismatches = compare(testCase.expect, actual);
  return {
    file: testCase.file,
    line: testCase.line,
    name: testCase.name,
    environment: testCase.environment,
    flag: flag.key,
    context,
    expected: testCase.expect,
    actual,
    passed: mismatches.length === 0,
    mismatches,
  };
}

const answerOf = (e: Evaluation): Answer =>
  isEvaluationError(e)
    ? { errorCode: e.errorCode, errorDetails: e.errorDetails }
    : { ...(e.value !== undefined && { value: e.value }), ...(e.variant !== undefined && { variant: e.variant }), reason: e.reason };

function compare(expected: Expectation, actual: Answer): (keyof Expectation)[] {
  const wrong: (keyof Expectation)[] = [];
  if (expected.variant !== undefined && actual.variant !== expected.variant) wrong.push("variant");
  if (expected.value !== undefined && (actual.value === undefined || canonicalJson(actual.value) !== canonicalJson(expected.value)))
    wrong.push("value");
  if (expected.reason !== undefined && actual.reason !== expected.reason) wrong.push("reason");
  if (expected.errorCode !== undefined && (actual.errorCode ?? null) !== expected.errorCode) wrong.push("errorCode");
  return wrong;
}

/** The overrides file as the server reads it, applied by a layer that never writes it back. */
async function overrideLayer(file: string | undefined): Promise<OverrideLayer | undefined> {
  if (file === undefined) return undefined;
  const fromFile = new OverrideLayer({ logger: silentLogger, file });
  await fromFile.load();
  const layer = new OverrideLayer({ logger: silentLogger });
  for (const [env, flags] of Object.entries(fromFile.list()))
    for (const [key, override] of Object.entries(flags)) await layer.set(env, key, override);
  return layer;
}

async function coverageOf(trackers: Map<string, CoverageTracker>, onlyFlags: RunOptions["onlyFlags"]): Promise<CoverageSummary> {
  const environments: EnvironmentCoverage[] = [];
  for (const [env, tracker] of [...trackers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    environments.push(await tracker.report(onlyFlags ? (onlyFlags.get(env) ?? new Set()) : undefined));
  }
  let branches = 0;
  let reached = 0;
  for (const env of environments) for (const flag of env.flags) ((branches += flag.branches), (reached += flag.reached));
  const percent = branches === 0 ? 100 : Math.floor((reached / branches) * 1000) / 10;
  return { branches, reached, percent, environments };
}
