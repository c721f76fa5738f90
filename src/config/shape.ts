/**
 * The shape every parsed document must have before any later stage walks it: nested no deeper
 * than MAX_DEPTH. Validation, merging, compiling and the snapshot all walk values recursively;
 * a hostile document (thousands of nested `[`) would overflow the stack in one of them and
 * take every other source's reload down with it. Checked once, on the parsed value, without
 * recursion.
 */

/** Deeper than any real flag configuration (JsonLogic rules included), shallow enough for every recursive walk. */
export const MAX_DEPTH = 128;

/** How deep `value` nests objects and arrays (a scalar is 0), counting no further than `limit + 1`. */
export function nestingDepth(value: unknown, limit = MAX_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    const inner = depth + 1;
    if (inner > deepest) deepest = inner;
    if (inner > limit) return inner;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === "object" && child !== null) stack.push([child, inner]);
    }
  }
  return deepest;
}

/** Why the document cannot be loaded, if its shape says so. */
export function shapeProblem(value: unknown): string | undefined {
  const depth = nestingDepth(value);
  return depth > MAX_DEPTH ? `the document nests deeper than ${MAX_DEPTH} levels of mappings and lists; no flag configuration needs that` : undefined;
}

/**
 * Where a text opens more than MAX_DEPTH `[` and `{` without closing them, checked before any
 * parser sees it: the parsers recurse once per level, and a stack overflow inside them is not
 * always a catchable error (V8 may abort the process). Counts every bracket, in strings and
 * comments too: a real file never has a hundred more openings than closings.
 */
export function textNestingProblem(text: string): { line: number; col: number; message: string } | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) {
        return { line, col: i - lineStart + 1, message: `the document nests deeper than ${MAX_DEPTH} levels of [ and {; no flag configuration needs that` };
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
