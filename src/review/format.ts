/** A configuration diff as text for a terminal, Markdown for a pull-request comment, or JSON for a script. */
import { escapeLines } from "../log/escape.js";
import { formatProblem, type JsonValue } from "../model/types.js";
import { shown } from "../testing/reporters.js";
import type { TestReport } from "../testing/run.js";
import type { ConfigurationDiff, EnvironmentDiff, FlagChange, ServerEvent } from "./compare.js";
import { ruleDiff } from "./rule-diff.js";

export type DiffFormat = "text" | "markdown" | "json";

export interface DiffReport extends ConfigurationDiff {
  /** What was compared, as given (`OLD`/`NEW`, or `REV` and the sources). */
  before: string;
  after: string;
  /** `--tests`: the cases of the changed flags, run against NEW. */
  tests?: TestReport;
}

const quoted = (s: string | null): string => (s === null ? "null" : JSON.stringify(s));

/**
 * How one format writes what the report quotes from the files. It only formats: text and
 * Markdown are built as lines and escaped once, each line whole (escapeLines), at the end.
 */
interface Style {
  /** A flag key, segment or environment name. */
  code(s: string): string;
  /** A value or name in a detail line (already JSON, or a name to quote). */
  value(s: string): string;
  /** A detail line under a flag's item. */
  detail(text: string): string;
  /** A block of diff lines (` `, `-`, `+` first) under the detail before it. */
  diff(lines: string[]): string[];
}

/** The summary after `flag changed: KEY:`: short fields with before -> after, the others by name (their details follow). */
function flagChangeText(c: FlagChange, style: Style): string {
  const parts: string[] = [];
  for (const field of c.fields) {
    if (field === "state" && c.state) parts.push(`state ${c.state.before} -> ${c.state.after}`);
    else if (field === "defaultVariant" && c.defaultVariant)
      parts.push(`defaultVariant ${style.value(quoted(c.defaultVariant.before))} -> ${style.value(quoted(c.defaultVariant.after))}`);
    else parts.push(field);
  }
  return parts.join(", ");
}

/** A value shown on one line; undefined when it deserves a diff of its own (an object or array). */
const scalarText = (value: JsonValue | undefined): string | undefined =>
  value === null || typeof value !== "object" ? JSON.stringify(value) : undefined;

/**
 * What changed in the keys of variants or metadata: added and removed with their values,
 * changed ones as before -> after (a variant whose value is an object: a diff of it).
 */
function keyLines(
  what: string,
  change: { added: string[]; removed: string[]; changed: string[]; before: Record<string, JsonValue>; after: Record<string, JsonValue> },
  style: Style,
): string[] {
  const lines: string[] = [];
  const shown = (v: JsonValue | undefined) => style.value(scalarText(v) ?? JSON.stringify(v));
  for (const key of change.added) lines.push(style.detail(`${what} added: ${style.value(quoted(key))} = ${shown(change.after[key])}`));
  for (const key of change.removed)
    lines.push(style.detail(`${what} removed: ${style.value(quoted(key))} (was ${shown(change.before[key])})`));
  for (const key of change.changed) {
    const [was, now] = [change.before[key], change.after[key]];
    if (scalarText(was) !== undefined && scalarText(now) !== undefined)
      lines.push(style.detail(`${what} changed: ${style.value(quoted(key))} = ${shown(was)} -> ${shown(now)}`));
    else lines.push(style.detail(`${what} changed: ${style.value(quoted(key))}:`), ...style.diff(ruleDiff(was, now)));
  }
  return lines;
}

/** The details under a changed flag: its variants, targeting (a rule diff) and metadata, before and after. */
function flagChangeDetails(c: FlagChange, style: Style): string[] {
  const lines: string[] = [];
  if (c.variants) lines.push(...keyLines("variant", c.variants, style));
  if (c.targeting) {
    const how = !c.targeting.before ? " (added)" : !c.targeting.after ? " (removed: every evaluation answers the default)" : "";
    lines.push(style.detail(`targeting${how}:`), ...style.diff(ruleDiff(c.targeting.before, c.targeting.after)));
  }
  if (c.metadata) lines.push(...keyLines("metadata", c.metadata, style));
  return lines;
}

const eventText = (e: ServerEvent): string => {
  const detail = typeof e.data.flagKey === "string" ? ` ${e.data.flagKey}` : typeof e.data.reason === "string" ? ` (${e.data.reason})` : "";
  return `${e.event}${detail}`;
};

/** The lines of one environment, as `- ` items with their details indented under them (Markdown and text alike). */
function environmentLines(env: EnvironmentDiff, style: Style): string[] {
  const { code } = style;
  const lines: string[] = [];
  const list = (label: string, keys: string[]) => keys.length && lines.push(`- ${label}: ${keys.map(code).join(", ")}`);
  if (env.status === "invalid") lines.push("- cannot be loaded: a running server keeps its last good configuration (no events)");
  if (env.status === "removed") lines.push("- environment removed: its key stops working and its streams close");
  if (env.status === "added") lines.push("- environment added");
  list("flags added", env.added);
  list("flags removed", env.removed);
  for (const c of env.changed) {
    lines.push(`- flag changed: ${code(c.flag)}: ${flagChangeText(c, style)}`);
    lines.push(...flagChangeDetails(c, style));
  }
  list("flags with problems (the server keeps their last good definition)", env.invalid);
  for (const s of env.segments) {
    lines.push(
      `- segment ${s.change}: ${code(s.segment)}${s.flags.length ? `, affects ${s.flags.map(code).join(", ")}` : ", used by no flag"}`,
    );
    if (s.change === "updated") lines.push(style.detail("rule:"), ...style.diff(ruleDiff(s.before, s.after)));
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

/** The terminal's: names as they are, a diff's lines indented under their label. */
const TEXT: Style = {
  code: (s) => s,
  value: (s) => s,
  detail: (text) => `    ${text}`,
  diff: (lines) => lines.map((l) => `      ${l}`),
};

export function textDiff(report: DiffReport): string {
  const lines: string[] = [`flagserve diff ${report.before} -> ${report.after}`];
  const touched = report.environments.filter((e) => e.status !== "unchanged");
  if (touched.length === 0) lines.push("no changes");
  for (const env of touched) lines.push(`${env.environment} (${env.status}):`, ...environmentLines(env, TEXT).map((l) => `  ${l}`));
  for (const p of report.problems) lines.push(`problem: ${formatProblem(p)}`);
  if (report.tests) lines.push("tests:", ...testLines(report.tests, (s) => s).map((l) => `  ${l}`));
  return escapeLines(lines);
}

/** Inline code that no backtick inside can close early. */
const mdCode = (s: string): string => {
  const fence = "`".repeat((s.match(/`+/g) ?? [""]).reduce((n, run) => Math.max(n, run.length), 0) + 1);
  return `${fence}${fence.length > 1 || s.startsWith("`") ? " " : ""}${s}${fence.length > 1 ? " " : ""}${fence}`;
};

/** A fenced block no line inside can close: longer than any run of backticks in it. */
function mdFence(info: string, lines: string[]): string[] {
  const longest = lines.reduce((n, l) => Math.max(n, ...(l.match(/`+/g) ?? [""]).map((run) => run.length)), 0);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}${info}`, ...lines, fence];
}

/** A pull request's: names and values as inline code, a diff as a ```diff block (GitHub colours it). */
const MARKDOWN: Style = {
  code: mdCode,
  value: mdCode,
  detail: (text) => `  - ${text}`,
  diff: (lines) => mdFence("diff", lines).map((l) => `    ${l}`),
};

export function markdownDiff(report: DiffReport): string {
  const touched = report.environments.filter((e) => e.status !== "unchanged");
  const lines: string[] = [`### flagserve diff ${mdCode(report.before)} → ${mdCode(report.after)}`, ""];
  if (touched.length === 0) lines.push("No flag changes.");
  for (const env of touched) lines.push(`#### ${mdCode(env.environment)} (${env.status})`, "", ...environmentLines(env, MARKDOWN), "");
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
