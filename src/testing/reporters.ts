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

/** A value from outside (a name, a flag key): no control character, a line feed included, reaches the terminal as such (log/escape.ts). */
export const printable = (text: string): string => escapeControls(text);

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

/** The human report: failures in full, then the counts, then coverage. */
export function humanReport(report: TestReport, cwd: string = process.cwd()): string {
  const lines: string[] = [];
  for (const p of report.configProblems) lines.push(`warning: ${formatProblem({ ...p, file: shown(p.file, cwd) })}`);
  for (const p of report.problems) lines.push(`error: ${formatProblem({ ...p, file: shown(p.file, cwd) })}`);
  for (const r of report.results) {
    if (r.passed) continue;
    lines.push(
      `FAIL ${shown(r.file, cwd)}:${r.line} ${r.name}${r.contextLine !== r.line ? ` (context at line ${r.contextLine})` : ""}`,
      `  flag:     ${r.flag} (environment ${r.environment})`,
      `  context:  ${JSON.stringify(r.context)}`,
      `  expected: ${answerText(r.expected)}`,
      `  actual:   ${answerText(r.actual)}`,
    );
  }
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
  // Each line escaped whole: a flag key, name or file name with a line feed cannot fake a line.
  return escapeLines(lines);
}

/** Text from outside in XML: every control character escaped first (printable), then XML's own. */
const xml = (text: string): string => xmlEscape(printable(text));

const xmlEscape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * JUnit XML as CI systems read it (GitHub, GitLab, Jenkins): one testsuite per test file, one
 * testcase per check; a failure's message says expected and actual, its text the whole story.
 */
export function junitReport(report: TestReport, cwd: string = process.cwd()): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const r of report.results) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const errors = report.problems.length;
  out.push(`<testsuites name="flagserve test" tests="${report.results.length + errors}" failures="${report.failed}" errors="${errors}">`);
  for (const [file, results] of byFile) {
    const failures = results.filter((r) => !r.passed).length;
    out.push(`  <testsuite name="${xml(shown(file, cwd))}" tests="${results.length}" failures="${failures}" errors="0">`);
    for (const r of results) {
      const name = `${r.name} [${r.flag}]${r.contextLine !== r.line ? ` (line ${r.contextLine})` : ""}`;
      const open = `    <testcase name="${xml(name)}" classname="${xml(`${r.environment}.${r.flag}`)}" file="${xml(shown(r.file, cwd))}" line="${r.contextLine || r.line}"`;
      if (r.passed) {
        out.push(`${open}/>`);
        continue;
      }
      const message = `expected ${answerText(r.expected)}; got ${answerText(r.actual)}`;
      const text = escapeLines([
        where(r, cwd),
        `flag: ${r.flag} (environment ${r.environment})`,
        `context: ${JSON.stringify(r.context)}`,
        `expected: ${answerText(r.expected)}`,
        `actual: ${answerText(r.actual)}`,
      ]);
      out.push(`${open}>`, `      <failure message="${xml(message)}" type="mismatch">${xmlEscape(text)}</failure>`, "    </testcase>");
    }
    out.push("  </testsuite>");
  }
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
  return out.join("\n");
}

/** The report as JSON: stable field names, absolute file paths. */
export const jsonReport = (report: TestReport): string =>
  JSON.stringify({ ok: report.problems.length === 0 && report.failed === 0, ...report });

export function formatReport(reporter: Reporter, report: TestReport, cwd?: string): string {
  if (reporter === "junit") return junitReport(report, cwd);
  if (reporter === "json") return jsonReport(report);
  return humanReport(report, cwd);
}
