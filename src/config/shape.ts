/**
 * The shape every parsed document must have before any later stage walks it: nested no deeper
 * than MAX_DEPTH. Validation, merging, compiling and the snapshot all walk values recursively;
 * a hostile document (thousands of nested `[`) would overflow the stack in one of them and
 * take every other source's reload down with it. Checked once, on the parsed value, without
 * recursion.
 */
import { editOf } from "../model/edits.js";
import { ITEMS_PER_YIELD, runSteps, type Steps } from "../model/steps.js";

/** Deeper than any real flag configuration (JsonLogic rules included), shallow enough for every recursive walk. */
export const MAX_DEPTH = 128;

/**
 * How deep `value` nests objects and arrays (a scalar is 0), counting no further than `limit + 1`.
 * `checked` is a value already found no deeper than `limit`: a part of `value` that is the very
 * object found at the same place in it is not walked again (the loader shares a changed file's
 * unchanged parts with its last value, so an edit walks what it changed); the depth returned is
 * then that of the parts walked, which is all the limit needs. A mapping with a recorded edit from
 * the one checked (model/edits.ts) is walked through the entries the edit replaced.
 */
export const nestingDepth = (value: unknown, limit = MAX_DEPTH, checked?: unknown): number =>
  runSteps(nestingDepthSteps(value, limit, checked));

/** nestingDepth in steps (a 10 000-flag file is walked a few dozen nodes and keys at a time). */
export function* nestingDepthSteps(value: unknown, limit = MAX_DEPTH, checked?: unknown): Steps<number> {
  let deepest = 0;
  let walked = 0;
  const stack: [unknown, number, unknown][] = [[value, 0, checked]];
  while (stack.length > 0) {
    const [item, depth, was] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    const inner = depth + 1;
    if (item === was) {
      // Walked before at this very place: as deep as the limit at most, and no deeper than it was.
      if (inner > deepest) deepest = inner;
      continue;
    }
    if (inner > deepest) deepest = inner;
    if (inner > limit) return inner;
    if (++walked % ITEMS_PER_YIELD === 0) yield;
    const counterpart =
      typeof was === "object" && was !== null && Array.isArray(was) === Array.isArray(item) ? (was as Record<string, unknown>) : undefined;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) {
        const child: unknown = item[i];
        if (typeof child === "object" && child !== null) stack.push([child, inner, counterpart?.[i]]);
      }
    } else {
      // Indexed, with yields: the `flags:` mapping alone has 10 000 keys. Of a mapping an edit
      // made from the one checked at this place, only the entries it replaced.
      const edit = editOf(item);
      const keys = edit !== undefined && edit.from === was ? edit.changed : Object.keys(item);
      for (let i = 0; i < keys.length; i++) {
        if (++walked % ITEMS_PER_YIELD === 0) yield;
        const key = keys[i]!;
        const child = (item as Record<string, unknown>)[key];
        if (typeof child !== "object" || child === null) continue;
        const childWas = counterpart && Object.hasOwn(counterpart, key) ? counterpart[key] : undefined;
        // The very object walked before (most of a big file after an edit): as deep as it was, not pushed.
        if (child === childWas) deepest = Math.max(deepest, inner + 1);
        else stack.push([child, inner, childWas]);
      }
    }
  }
  return deepest;
}

/** Why the document cannot be loaded, if its shape says so; `checked` as in nestingDepth. */
export const shapeProblem = (value: unknown, checked?: unknown): string | undefined => runSteps(shapeProblemSteps(value, checked));

/** shapeProblem in steps. */
export function* shapeProblemSteps(value: unknown, checked?: unknown): Steps<string | undefined> {
  const depth = yield* nestingDepthSteps(value, MAX_DEPTH, checked);
  return depth > MAX_DEPTH
    ? `the document nests deeper than ${MAX_DEPTH} levels of mappings and lists; no flag configuration needs that`
    : undefined;
}

/**
 * The deepest a text nests `[` and `{` as textNestingProblem counts them (every bracket, in
 * strings and comments too; a closing one below zero ignored), no further than MAX_DEPTH + 1.
 */
export function textNestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest && (deepest = depth) > MAX_DEPTH) return deepest;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return deepest;
}

/**
 * Where a text opens more than MAX_DEPTH `[` and `{` without closing them, checked before any
 * parser sees it: the parsers recurse once per level, and a stack overflow inside them is not
 * always a catchable error (V8 may abort the process). Counts every bracket, in strings and
 * comments too: a real file never has a hundred more openings than closings.
 */
export function textNestingProblem(text: string): { line: number; col: number; message: string } | undefined {
  if (textNestingDepth(text) <= MAX_DEPTH) return undefined;
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) {
        return {
          line,
          col: i - lineStart + 1,
          message: `the document nests deeper than ${MAX_DEPTH} levels of [ and {; no flag configuration needs that`,
        };
      }
    } else if (c === 0x5d || c === 0x7d) {
      if (depth > 0) depth--;
    } else if (c === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return undefined;
}
