/**
 * `flagserve diff` without the command line, and the programmatic API's `diffConfigurations`:
 * two configurations (paths, URLs, or the sources as they were at a git revision) loaded as
 * the server loads them, compared (compare.ts), and optionally the test cases of the changed
 * flags run against the new one.
 */
import type { ConfigLoad } from "../config/index.js";
import type { SourceLoad } from "../sources/source.js";
import { changedFlags, compareLoads } from "./compare.js";
import type { DiffReport } from "./format.js";

export {
  compareLoads,
  changedFlags,
  FLAG_FIELDS,
  type ConfigurationDiff,
  type EnvironmentDiff,
  type FlagChange,
  type FlagField,
  type SegmentChange,
  type ServerEvent,
} from "./compare.js";
export { formatDiff, type DiffFormat, type DiffReport } from "./format.js";
export { GitError } from "./git.js";

export interface DiffOptions {
  /** The configuration before: paths or URLs (`OLD`); or give `git`. */
  before?: string | readonly string[];
  /** The sources at this git revision are the configuration before (read from the repository, no checkout). */
  git?: string;
  /** The configuration after (`NEW`); with `git`, default ./flags. */
  after: string | readonly string[];
  /** Also run the test cases (beside `after`) of the flags whose answers may change. */
  tests?: boolean;
}

const list = (specs: string | readonly string[]): string[] => (typeof specs === "string" ? [specs] : [...specs]);

async function load(reads: (() => Promise<SourceLoad>)[]): Promise<ConfigLoad> {
  const { loadSourceReads } = await import("../config/index.js");
  return loadSourceReads(await Promise.all(reads.map((read) => read())));
}

/** Compares two configurations; GitError for a revision or repository that does not exist. */
export async function diffConfigurations(options: DiffOptions): Promise<DiffReport> {
  const [{ readOnce }, { readAtRevision, repositoryOf, resolveRevision }] = await Promise.all([
    import("../sources/read-once.js"),
    import("./git.js"),
  ]);
  const after = list(options.after);
  const { git } = options;
  if (git === undefined && options.before === undefined) throw new TypeError("diffConfigurations: give `before` or `git`");
  // A revision that does not exist is one error, before anything is read.
  if (git !== undefined) for (const spec of after) await resolveRevision((await repositoryOf(spec)).top, git);
  const beforeReads =
    git !== undefined ? after.map((spec) => () => readAtRevision(git, spec)) : list(options.before!).map((spec) => () => readOnce(spec));
  const [beforeLoad, afterLoad] = await Promise.all([load(beforeReads), load(after.map((spec) => () => readOnce(spec)))]);
  const diff = compareLoads(beforeLoad, afterLoad);
  const report: DiffReport = {
    before: git ?? list(options.before!).join(" "),
    after: after.join(" "),
    ...diff,
  };
  if (options.tests) {
    const { findTestFiles, readTestFiles, runTests } = await import("../testing/index.js");
    const read = await readTestFiles(await findTestFiles(after));
    const tests = await runTests(afterLoad, read.files, { onlyFlags: changedFlags(diff) });
    tests.problems.unshift(...read.problems);
    report.tests = tests;
  }
  return report;
}
