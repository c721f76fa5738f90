/**
 * A targeting rule's change as a reviewer reads it: both versions written as YAML, the way flag
 * files write rules (short leaves inline, the branches of `if` and `fractional` one per line),
 * and compared line by line with jsdiff, with a little unchanged context around each change.
 * The rendering is canonical (the loaded rule, not its source text), so moving or reformatting a
 * rule shows no change, and the same change always reads the same.
 */
import { structuredPatch } from "diff";
import { Document, isMap, isPair, isScalar, isSeq } from "yaml";
import type { JsonValue } from "../model/types.js";

/** Operators whose arguments are branches: always one per line, so a diff names the branch. */
const BRANCHING = new Set(["if", "?:", "fractional"]);
/** A collection this short (as JSON) with no branching inside is written inline: `{ var: email }`. */
const INLINE_UP_TO = 48;
/** A rule up to this many lines is shown whole; a longer one by its changes, with CONTEXT unchanged lines around each. */
const WHOLE_UP_TO = 40;
const CONTEXT = 3;

/** YAML 1.1 output quotes `"on"`, `"off"`, `"yes"`, as flag files must write them. */
const YAML_OPTIONS = { version: "1.1", lineWidth: 0, blockQuote: false } as const;

const branches = (value: unknown): boolean =>
  Array.isArray(value)
    ? value.some(branches)
    : value !== null && typeof value === "object" && Object.entries(value).some(([k, v]) => BRANCHING.has(k) || branches(v));

/** Sets each collection's style; `block`: the rule itself, or a branch list, never inline. */
function layOut(node: unknown, block = false): void {
  if (!isMap(node) && !isSeq(node)) return;
  const value: unknown = node.toJSON();
  node.flow = !block && !branches(value) && JSON.stringify(value).length <= INLINE_UP_TO;
  for (const item of node.items as unknown[]) {
    if (isPair(item)) layOut(item.value, isScalar(item.key) && BRANCHING.has(String(item.key.value)));
    else layOut(item);
  }
}

/** A rule as YAML lines (none for no rule). Strings with line breaks are written quoted, on one line. */
export function ruleText(rule: JsonValue | undefined): string {
  if (rule === undefined || rule === null || (typeof rule === "object" && Object.keys(rule).length === 0)) return "";
  const doc = new Document(rule, YAML_OPTIONS);
  layOut(doc.contents, true);
  return doc.toString(YAML_OPTIONS);
}

/**
 * The lines of a rule diff: ` ` unchanged, `-` before, `+` after, `...` for unchanged lines left
 * out between two far apart changes of a long rule. Empty when both render the same.
 */
export function ruleDiff(before: JsonValue | undefined, after: JsonValue | undefined): string[] {
  const [was, now] = [ruleText(before), ruleText(after)];
  const lineCount = (text: string) => text.split("\n").length - 1;
  const context = Math.max(lineCount(was), lineCount(now)) <= WHOLE_UP_TO ? Number.MAX_SAFE_INTEGER : CONTEXT;
  const patch = structuredPatch("before", "after", was, now, "", "", { context });
  const lines: string[] = [];
  let shownUpTo = 0; // the last line of `was` shown so far
  for (const hunk of patch.hunks) {
    if (hunk.oldStart - 1 > shownUpTo) lines.push("...");
    for (const line of hunk.lines) if (!line.startsWith("\\")) lines.push(line);
    shownUpTo = hunk.oldStart - 1 + hunk.oldLines;
  }
  if (patch.hunks.length > 0 && shownUpTo < lineCount(was)) lines.push("...");
  return lines;
}
