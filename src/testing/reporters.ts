/** A test report as text for a person, JUnit XML for a CI system, or JSON for a script. */
import { relative, isAbsolute } from "node:path";
import { escapeControls, escapeLines } from "../log/escape.js";
import { formatProblem } from "../model/types.js";
import type { Expectation } from "./cases.js";
import type { Answer, CaseResult, TestReport } from "./run.js";

export type Reporter = "human" | "junit" | "json";

/** A file as a person reads it: relative to `cwd` when inside it. */
export const shown = (file: string, cwd: string = process.cwd()): string => {
  if (!isAbsolute(file)) return file;
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
};

const answerText = (a: Answer | Expectation): string => {
  const parts: string[] = [];
  if ("errorCode" in a && a.errorCode !== undefined) parts.push(a.errorCode === null ? "no error" : `errorCode ${a.errorCode}`);
  if (a.variant !== undefined) parts.push(`variant ${JSON.stringify(a.variant)}`);
  if (a.value !== undefined) parts.push(`value ${JSON.stringify(a.value)}`);
  if (a.reason !== undefined) parts.push(`reason ${a.reason}`);
  if ("errorDetails" in a && a.errorDetails) parts.push(`(${a.errorDetails})`);
  return parts.join(", ") || "nothing";
};

/** Where a result is written: the case, and the table row when the case has one. */
const where = (r: CaseResult, cwd: string): string =>
  `${shown(r.file, cwd)}:${r.line}${r.contextLine !== r.line ? ` (context at line ${r.contextLine})` : ""}`;

/** `ok: 12 of 12 checks passed` (a check: one flag for one context of one case). */
export function summaryLine(report: TestReport): string {
  const cases = report.passed + report.failed;
  const errors =
    report.problems.length > 0 ? `; ${report.problems.length} error${report.problems.length === 1 ? "" : "s"} in test files` : "";
  return `${report.failed === 0 && !errors ? "ok" : "FAILED"}: ${report.passed} of ${cases} check${cases === 1 ? "" : "s"} passed${report.failed ? `, ${report.failed} failed` : ""}${errors}`;
}

export const coverageLine = (coverage: NonNullable<TestReport["coverage"]>): string =>
  `coverage: ${coverage.percent}% of targeting branches reached (${coverage.reached} of ${coverage.branches})`;

/**
 * Where a report goes: text whose lines are each escaped whole (log/escape.ts), in order; a
 * promise returned when the output is full, resolved once it can take more.
 */
export type ReportSink = (text: string) => void | Promise<void>;

/**
 * A report written as the run goes (runTests' `onResult`), holding no result: `result` for each
 * check as it is made (returning the sink's promise when it is full), `end` once with the report
 * (its counts, problems and coverage).
 */
export interface ReportWriter {
  result(r: CaseResult): void | Promise<void>;
  end(report: TestReport): void;
}

export function reportWriter(reporter: Reporter, write: ReportSink, cwd: string = process.cwd()): ReportWriter {
  if (reporter === "junit") return junitWriter(write, cwd);
  if (reporter === "json") return jsonWriter(write);
  return humanWriter(write, cwd);
}

/** A whole report as text: what the writer writes, fed the report's results. */
function written(writer: (write: ReportSink) => ReportWriter, report: TestReport): string {
  let text = "";
  const to = writer((chunk) => void (text += chunk));
  for (const r of report.results) to.result(r);
  to.end(report);
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

/** A failure in full: where, the flag, the context, what was expected and what came back. */
const failureLines = (r: CaseResult, cwd: string): string[] => [
  `FAIL ${shown(r.file, cwd)}:${r.line} ${r.name}${r.contextLine !== r.line ? ` (context at line ${r.contextLine})` : ""}`,
  `  flag:     ${r.flag} (environment ${r.environment})`,
  `  context:  ${JSON.stringify(r.context)}`,
  `  expected: ${answerText(r.expected)}`,
  `  actual:   ${answerText(r.actual)}`,
];

/** The human report's end: the configuration's problems, the test files', the counts, then coverage. */
function endLines(report: TestReport, cwd: string): string[] {
  const lines: string[] = [];
  for (const p of report.configProblems) lines.push(`warning: ${formatProblem({ ...p, file: shown(p.file, cwd) })}`);
  for (const p of report.problems) lines.push(`error: ${formatProblem({ ...p, file: shown(p.file, cwd) })}`);
  lines.push(summaryLine(report));
  const { coverage } = report;
  if (coverage) {
    lines.push(coverageLine(coverage));
    for (const env of coverage.environments) {
      for (const flag of env.flags) {
        for (const b of flag.missed) {
          const at = b.file ? `${shown(b.file, cwd)}${b.line ? `:${b.line}` : ""}` : env.environment;
          lines.push(`  not reached: ${at} ${flag.flag}: ${b.label}`);
        }
      }
    }
  }
  return lines;
}

// Each line escaped whole: a flag key, name or file name with a line feed cannot fake a line.
const humanWriter = (write: ReportSink, cwd: string): ReportWriter => ({
  result: (r) => (r.passed ? undefined : write(`${escapeLines(failureLines(r, cwd))}\n`)),
  end: (report) => write(`${escapeLines(endLines(report, cwd))}\n`),
});

/** The human report: failures in full, then problems, the counts and coverage. */
export const humanReport = (report: TestReport, cwd: string = process.cwd()): string => written((write) => humanWriter(write, cwd), report);

/** Text from outside in XML: every control character escaped first (log/escape.ts), then XML's own. */
const xml = (text: string): string => xmlEscape(escapeControls(text));

const xmlEscape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A check as a `<testcase>` (its lines). */
function testcaseXml(r: CaseResult, cwd: string): string {
  const name = `${r.name} [${r.flag}]${r.contextLine !== r.line ? ` (line ${r.contextLine})` : ""}`;
  const open = `    <testcase name="${xml(name)}" classname="${xml(`${r.environment}.${r.flag}`)}" file="${xml(shown(r.file, cwd))}" line="${r.contextLine || r.line}"`;
  if (r.passed) return `${open}/>`;
  const message = `expected ${answerText(r.expected)}; got ${answerText(r.actual)}`;
  const text = escapeLines([
    where(r, cwd),
    `flag: ${r.flag} (environment ${r.environment})`,
    `context: ${JSON.stringify(r.context)}`,
    `expected: ${answerText(r.expected)}`,
    `actual: ${answerText(r.actual)}`,
  ]);
  return [`${open}>`, `      <failure message="${xml(message)}" type="mismatch">${xmlEscape(text)}</failure>`, "    </testcase>"].join(
    "\n",
  );
}

/**
 * JUnit XML as CI systems read it (GitHub, GitLab, Jenkins): one testsuite per test file, one
 * testcase per check; a failure's message says expected and actual, its text the whole story.
 * The counts come first in XML, so each check is kept as its `<testcase>` text until the end
 * (a line, not the result; a run makes at most MAX_CHECKS).
 */
function junitWriter(write: ReportSink, cwd: string): ReportWriter {
  const suites = new Map<string, { tests: number; failures: number; xml: string[] }>();
  return {
    result(r) {
      let suite = suites.get(r.file);
      if (!suite) suites.set(r.file, (suite = { tests: 0, failures: 0, xml: [] }));
      suite.tests++;
      if (!r.passed) suite.failures++;
      suite.xml.push(testcaseXml(r, cwd));
    },
    end(report) {
      const errors = report.problems.length;
      write(
        `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="flagserve test" tests="${report.passed + report.failed + errors}" failures="${report.failed}" errors="${errors}">\n`,
      );
      // A suite at a time, each let go once written.
      for (const [file, suite] of suites) {
        const head = `  <testsuite name="${xml(shown(file, cwd))}" tests="${suite.tests}" failures="${suite.failures}" errors="0">`;
        write(`${[head, ...suite.xml, "  </testsuite>"].join("\n")}\n`);
        suites.delete(file);
      }
      const out: string[] = [];
      if (errors > 0) {
        out.push(`  <testsuite name="test files" tests="${errors}" failures="0" errors="${errors}">`);
        for (const p of report.problems) {
          const at = `${shown(p.file, cwd)}:${p.line}`;
          out.push(
            `    <testcase name="${xml(at)}" file="${xml(shown(p.file, cwd))}" line="${p.line}">`,
            `      <error message="${xml(p.message)}"/>`,
            "    </testcase>",
          );
        }
        out.push("  </testsuite>");
      }
      out.push("</testsuites>");
      write(`${out.join("\n")}\n`);
    },
  };
}

export const junitReport = (report: TestReport, cwd: string = process.cwd()): string => written((write) => junitWriter(write, cwd), report);

/** The report as JSON, results first as they come: stable field names, absolute file paths. */
function jsonWriter(write: ReportSink): ReportWriter {
  let first = true;
  return {
    result(r) {
      const text = `${first ? '{"results":[' : ","}${JSON.stringify(r)}`;
      first = false;
      return write(text);
    },
    end({ results: _results, ...rest }) {
      const ok = rest.problems.length === 0 && rest.failed === 0;
      write(`${first ? '{"results":[' : ""}],${JSON.stringify({ ok, ...rest }).slice(1)}\n`);
    },
  };
}

/** The report as JSON: stable field names, absolute file paths. */
export const jsonReport = (report: TestReport): string => written(jsonWriter, report);
