/**
 * How deep a document nests, checked before any parser recurses into its text, and again on the
 * parsed value when aliases may have nested one part inside another. The parsers and every later
 * stage recurse once per level: a hostile document thousands of levels deep would overflow the
 * stack, and near its limit V8 may abort the process instead of throwing.
 */
import { yaml } from "./yaml-package.js";
import type { TextProblem } from "./yaml-errors.js";

/** Deeper than any real flag configuration (JsonLogic rules included), shallow enough for every recursive walk. */
export const MAX_DEPTH = 128;

/**
 * Nodes a document may hold once its aliases are expanded, beyond one per character of its text
 * (which no document without aliases can pass): `*alias` shares a node, and a few lines of
 * aliases of aliases ("billion laughs") expand to billions.
 */
export const MAX_ALIAS_NODES = 100_000;

const TOO_DEEP = `nested deeper than ${MAX_DEPTH} levels of mappings and lists; no flag configuration needs that`;

/**
 * Where `text` nests deeper than MAX_DEPTH, if it does. First a bound from characters alone, which
 * every real file passes: a node nests no deeper than the `[` and `{` opened before it, plus two
 * levels per column its line begins with (indentation and `- `, `? `, `: `; a block's entries are
 * indented more than it, but for a list under a mapping's key). Past it (deep indentation, `- - -`),
 * the yaml package's parser, which builds its syntax tree without recursing, says where.
 */
export function textNestingProblem(text: string): TextProblem | undefined {
  return nestingBound(text) <= MAX_DEPTH ? undefined : deepestPlace(text);
}

function nestingBound(text: string): number {
  let brackets = 0;
  let deepestBrackets = 0;
  let widestStart = 0;
  let lineStart = true;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (lineStart) {
      // Space, tab, `-`, `?`, `:`: what can open block collections at the start of a line.
      if (c === 0x20 || c === 0x09 || c === 0x2d || c === 0x3f || c === 0x3a) {
        if (++start > widestStart) widestStart = start;
      } else lineStart = false;
    }
    if (c === 0x5b || c === 0x7b) {
      if (++brackets > deepestBrackets) deepestBrackets = brackets;
    } else if ((c === 0x5d || c === 0x7d) && brackets > 0) brackets--;
    else if (c === 0x0a) {
      lineStart = true;
      start = 0;
    }
  }
  return deepestBrackets + 2 * (widestStart + 1);
}

/** Collections in the yaml package's syntax tree (flow ones are `[...]` and `{...}`). */
const COLLECTIONS = new Set(["block-map", "block-seq", "flow-collection"]);

/** The first collection of the text nested past MAX_DEPTH, by the yaml package's syntax tree, walked without recursion. */
function deepestPlace(text: string): TextProblem | undefined {
  const { LineCounter, Parser } = yaml();
  const lines = new LineCounter();
  for (const document of new Parser(lines.addNewLine).parse(text)) {
    const stack: [unknown, number][] = [[document, 0]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop()!;
      if (typeof node !== "object" || node === null) continue;
      const token = node as { type?: string; offset?: number; value?: unknown; items?: { key?: unknown; value?: unknown }[] };
      const inner = COLLECTIONS.has(token.type ?? "") ? depth + 1 : depth;
      if (inner > MAX_DEPTH) return { ...lines.linePos(token.offset ?? 0), message: `the document is ${TOO_DEEP}` };
      if (token.value !== undefined) stack.push([token.value, inner]);
      for (const item of token.items ?? []) stack.push([item.key, inner], [item.value, inner]);
    }
  }
  return undefined;
}

/**
 * Why a parsed value cannot be used, if it cannot: nested deeper than MAX_DEPTH, or holding more
 * than `textLength` + MAX_ALIAS_NODES nodes once its aliases are expanded. Walked without
 * recursion, each shared node as often as it is used, stopping at either limit.
 */
export function valueShapeProblem(value: unknown, textLength: number): string | undefined {
  const maxNodes = textLength + MAX_ALIAS_NODES;
  let nodes = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (++nodes > maxNodes) return `YAML aliases expand the document to more than ${maxNodes} values; write the repeated parts out`;
    if (typeof node !== "object" || node === null) continue;
    if (depth >= MAX_DEPTH) return `the document is ${TOO_DEEP}`;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return undefined;
}
