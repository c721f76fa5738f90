/**
 * `flagserve test` without the command line: find the test files of the served configuration,
 * read them, and run their cases (see run.ts). Also the programmatic API's `testFlags`.
 */
import { readdir, stat } from "node:fs/promises";
import { dirname, extname, join, resolve } from "node:path";
import type { ConfigLoad } from "../config/index.js";
import { isTestFileName, stemOf } from "../sources/discover.js";
import { sourceKindOf } from "../sources/source.js";
import type { Problem } from "../model/types.js";
import { contextCount, MAX_CHECKS, readTestFile, type TestFile } from "./cases.js";
import { runTests, type RunOptions, type TestReport } from "./run.js";

export { parseTestFile, readTestFile, environmentOfFileName, MAX_CHECKS, type Expectation, type TestCase, type TestFile } from "./cases.js";
export { runTests, type Answer, type CaseResult, type CoverageSummary, type RunOptions, type TestReport } from "./run.js";
export type { Branch, EnvironmentCoverage, FlagCoverage } from "./coverage.js";

/**
 * The test files beside the configuration: `*.test.yaml` (or `.yml`) in a directory SOURCE and
 * in its subdirectory environments; for a file SOURCE, `<stem>.test.yaml` beside it. URLs have none.
 */
export async function findTestFiles(specs: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const spec of specs) {
    if (sourceKindOf(spec) === "url") continue;
    const path = resolve(spec);
    const kind = await stat(path).catch(() => undefined);
    if (kind?.isDirectory()) for (const file of await testFilesIn(path, 1)) found.add(file);
    else if (kind?.isFile()) {
      for (const ext of [".test.yaml", ".test.yml"]) {
        const beside = join(dirname(path), `${stemOf(path)}${ext}`);
        if (extname(path) !== "" && (await stat(beside).catch(() => undefined))?.isFile()) found.add(beside);
      }
    }
  }
  return [...found].sort();
}

/** `--tests PATH`: a test file, or a directory searched like a directory SOURCE. */
export async function expandTestPaths(paths: readonly string[]): Promise<{ files: string[]; problems: Problem[] }> {
  const files: string[] = [];
  const problems: Problem[] = [];
  for (const given of paths) {
    const path = resolve(given);
    const kind = await stat(path).catch(() => undefined);
    if (kind?.isDirectory()) files.push(...(await testFilesIn(path, 1)));
    else if (kind) files.push(path);
    else problems.push({ file: path, line: 0, col: 0, message: "test file does not exist" });
  }
  return { files: [...new Set(files)], problems };
}

async function testFilesIn(dir: string, depth: number): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith(".")) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory() && depth > 0) files.push(...(await testFilesIn(full, depth - 1)));
    else if (!entry.isDirectory() && isTestFileName(entry.name)) files.push(full);
  }
  return files;
}

/**
 * Reads test files; those that cannot be used are problems (file:line). Together they hold at
 * most MAX_CHECKS contexts: the file that would take them past it is a problem instead.
 */
export async function readTestFiles(paths: readonly string[]): Promise<{ files: TestFile[]; problems: Problem[] }> {
  const files: TestFile[] = [];
  const problems: Problem[] = [];
  let room = MAX_CHECKS;
  for (const path of paths) {
    const parsed = await readTestFile(path, room);
    if (parsed.testFile) files.push(parsed.testFile);
    problems.push(...parsed.problems);
    room -= contextCount(parsed.testFile);
  }
  return { files, problems };
}

export interface TestFlagsOptions extends RunOptions {
  /** Directories, files or URLs of the configuration (what `flagserve test SOURCE...` takes). */
  sources: readonly string[];
  /** Test files or directories; default: those beside the sources (findTestFiles). */
  tests?: readonly string[];
}

/**
 * Loads the sources once (as `flagserve validate` does), finds or takes the test files, and runs
 * every case. Exit status as `flagserve test` gives it: `testExitCode(report)`.
 */
export async function testFlags(options: TestFlagsOptions): Promise<TestReport & { files: string[] }> {
  const [{ loadSourceReads }, { readOnce }] = await Promise.all([import("../config/index.js"), import("../sources/read-once.js")]);
  const load: ConfigLoad = await loadSourceReads(await Promise.all(options.sources.map((spec) => readOnce(spec))));
  const given = options.tests ? await expandTestPaths(options.tests) : { files: await findTestFiles(options.sources), problems: [] };
  const read = await readTestFiles(given.files);
  const report = await runTests(load, read.files, options);
  report.problems.unshift(...given.problems, ...read.problems);
  if (given.files.length === 0 && given.problems.length === 0) {
    const where = options.tests ?? options.sources;
    report.problems.push({
      file: where.map((s) => (sourceKindOf(s) === "url" ? s : resolve(s))).join(", "),
      line: 0,
      col: 0,
      message: "no test files found (expected <environment>.test.yaml beside the flag files, or --tests PATH)",
    });
  }
  return { ...report, files: given.files };
}

/** For `flagserve validate`: the problems of the test files beside the sources (unreadable, unknown environment or flag). */
export async function checkTestFiles(specs: readonly string[], load: ConfigLoad): Promise<Problem[]> {
  const read = await readTestFiles(await findTestFiles(specs));
  // Only environments that load can be checked; their own problems are reported already.
  const loadable = read.files.filter((f) => load.environments.has(f.environment) || !load.problems.has(f.environment));
  return [...read.problems, ...(await runTests(load, loadable, { onResult: () => undefined })).problems];
}

/** 0 all passed (and coverage at least `coverageMin`), 1 a case failed or coverage is short, 2 a test file or case cannot run. */
export function testExitCode(report: TestReport, coverageMin?: number): 0 | 1 | 2 {
  if (report.problems.length > 0) return 2;
  if (report.failed > 0) return 1;
  if (coverageMin !== undefined && report.coverage && report.coverage.percent < coverageMin) return 1;
  return 0;
}
