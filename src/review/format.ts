/** A configuration diff as text for a terminal, Markdown for a pull-request comment, or JSON for a script. */
import { escapeLines } from "../log/escape.js";
import { formatProblem } from "../model/types.js";
import { printable, shown } from "../testing/reporters.js";
import type { TestReport } from "../testing/run.js";
import type { ConfigurationDiff, EnvironmentDiff, FlagChange, ServerEvent } from "./compare.js";

export type DiffFormat = "text" | "markdown" | "json";

export interface DiffReport extends ConfigurationDiff {
  /** What was compared, as given (`OLD`/`NEW`, or `REV` and the sources). */
  before: string;
  after: string;
  /** `--tests`: the cases of the changed flags, run against NEW. */
  tests?: TestReport;
}

const quoted = (s: string | null): string => (s === null ? "null" : JSON.stringify(s));

function flagChangeText(c: FlagChange): string {
  const parts: string[] = [];
  for (const field of c.fields) {
    if (field === "state" && c.state) parts.push(`state ${c.state.before} -> ${c.state.after}`);
    else if (field === "defaultVariant" && c.defaultVariant)
      parts.push(`defaultVariant ${quoted(c.defaultVariant.before)} -> ${quoted(c.defaultVariant.after)}`);
    else if (field === "variants" && c.variants) {
      const v = c.variants;
      const bits = [
        ...(v.added.length ? [`added ${v.added.join(", ")}`] : []),
        ...(v.removed.length ? [`removed ${v.removed.join(", ")}`] : []),
        ...(v.changed.length ? [`value of ${v.changed.join(", ")}`] : []),
      ];
      parts.push(`variants (${bits.join("; ")})`);
    } else parts.push(field);
  }
  return parts.join(", ");
}

const eventText = (e: ServerEvent): string => {
  const detail = typeof e.data.flagKey === "string" ? ` ${e.data.flagKey}` : typeof e.data.reason === "string" ? ` (${e.data.reason})` : "";
  return `${e.event}${detail}`;
};

/** The lines of one environment, as `- ` items (Markdown and text alike). */
function environmentLines(env: EnvironmentDiff, code: (s: string) => string): string[] {
  const lines: string[] = [];
  const list = (label: string, keys: string[]) => keys.length && lines.push(`- ${label}: ${keys.map(code).join(", ")}`);
  if (env.status === "invalid") lines.push("- cannot be loaded: a running server keeps its last good configuration (no events)");
  if (env.status === "removed") lines.push("- environment removed: its key stops working and its streams close");
  if (env.status === "added") lines.push("- environment added");
  list("flags added", env.added);
  list("flags removed", env.removed);
  for (const c of env.changed) lines.push(`- flag changed: ${code(c.flag)}: ${flagChangeText(c)}`);
  list("flags with problems (the server keeps their last good definition)", env.invalid);
  for (const s of env.segments) {
    lines.push(
      `- segment ${s.change}: ${code(s.segment)}${s.flags.length ? `, affects ${s.flags.map(code).join(", ")}` : ", used by no flag"}`,
    );
  }
  if (env.apiKey)
    lines.push(`- API key ${env.apiKey} (${env.apiKey === "removed" ? "a generated key replaces it" : "the key is not shown"})`);
  if (env.notifications) lines.push(`- notifications changed (${env.notifications.before} -> ${env.notifications.after} targets)`);
  if (env.events.length) lines.push(`- events a running server sends: ${env.events.map((e) => code(eventText(e))).join(", ")}`);
  for (const p of env.problems) lines.push(`- problem: ${formatProblem({ ...p, file: shown(p.file) })}`);
  return lines;
}

function testLines(tests: TestReport, code: (s: string) => string): string[] {
  const lines: string[] = [];
  const total = tests.passed + tests.failed;
  lines.push(
    `${tests.failed === 0 && tests.problems.length === 0 ? "ok" : "FAILED"}: ${tests.passed} of ${total} check${total === 1 ? "" : "s"} of the changed flags passed`,
  );
  for (const r of tests.results) {
    if (r.passed) continue;
    lines.push(
      `- FAIL ${code(`${shown(r.file)}:${r.line}`)} ${r.name}: ${code(r.flag)} for ${code(JSON.stringify(r.context))}: expected ${code(JSON.stringify(r.expected))}, got ${code(JSON.stringify(r.actual))}`,
    );
  }
  for (const p of tests.problems) lines.push(`- error: ${formatProblem({ ...p, file: shown(p.file) })}`);
  return lines;
}

export function textDiff(report: DiffReport): string {
  const lines: string[] = [`flagserve diff ${report.before} -> ${report.after}`];
  const touched = report.environments.filter((e) => e.status !== "unchanged");
  if (touched.length === 0) lines.push("no changes");
  for (const env of touched) lines.push(`${env.environment} (${env.status}):`, ...environmentLines(env, (s) => s).map((l) => `  ${l}`));
  for (const p of report.problems) lines.push(`problem: ${formatProblem(p)}`);
  if (report.tests) lines.push("tests:", ...testLines(report.tests, (s) => s).map((l) => `  ${l}`));
  return escapeLines(lines);
}

/** Inline code that no backtick inside can close early. */
const mdCode = (s: string): string => {
  const clean = printable(s).replace(/\r?\n/g, " ");
  const fence = "`".repeat((clean.match(/`+/g) ?? [""]).reduce((n, run) => Math.max(n, run.length), 0) + 1);
  return `${fence}${fence.length > 1 || clean.startsWith("`") ? " " : ""}${clean}${fence.length > 1 ? " " : ""}${fence}`;
};

export function markdownDiff(report: DiffReport): string {
  const touched = report.environments.filter((e) => e.status !== "unchanged");
  const lines: string[] = [`### flagserve diff ${mdCode(report.before)} → ${mdCode(report.after)}`, ""];
  if (touched.length === 0) lines.push("No flag changes.");
  for (const env of touched) lines.push(`#### ${mdCode(env.environment)} (${env.status})`, "", ...environmentLines(env, mdCode), "");
  for (const p of report.problems) lines.push(`- problem: ${mdCode(formatProblem(p))}`);
  if (report.tests) lines.push("#### Tests of the changed flags", "", ...testLines(report.tests, mdCode), "");
  return escapeLines(lines).trimEnd();
}

/** Stable for scripts: per environment `added`, `removed`, `changed` (flag keys; each changed entry with its `fields`). */
export const jsonDiff = (report: DiffReport): string => JSON.stringify(report);

export function formatDiff(format: DiffFormat, report: DiffReport): string {
  if (format === "json") return jsonDiff(report);
  if (format === "markdown") return markdownDiff(report);
  return textDiff(report);
}
