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
