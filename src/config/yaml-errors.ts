/**
 * A YAML syntax error in words a person understands, at the line that is wrong. The `yaml` package
 * reports what its parser met (often at the line before the mistake, or at column 1), and one misplaced
 * line makes it report several errors: the first is the one to fix, and its CST tells which line and why.
 */
import type { CST, YAMLError } from "yaml";
import type { Problem } from "../model/types.js";

/** A problem of the text being read: its file is the caller's. */
export type TextProblem = Omit<Problem, "file">;

/** An offset's line and column, with that line's text and leading blanks (read only to quote them). */
type Place = { line: number; col: number; text: string; indent: number };

/** One problem for a document's errors (the first, explained by the syntax `tree` it was composed from), or each warning if none. */
export function explainYamlErrors(
  text: string,
  tree: readonly CST.Token[],
  { errors, warnings }: { errors: readonly YAMLError[]; warnings: readonly YAMLError[] },
  linePos: (offset: number) => { line: number; col: number },
): TextProblem[] {
  if (errors.length === 0) return warnings.map((w) => ({ ...linePos(w.pos[0]), message: `YAML warning: ${plainMessage(w)}` }));
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0]!;
  const lines = text.split(/\r?\n/);
  const placeOf = (offset: number): Place => {
    const { line, col } = linePos(offset);
    const text = lines[line - 1] ?? "";
    return { line, col, text, indent: text.length - text.trimStart().length };
  };
  const at = placeOf(first.pos[0]);
  // A tab yaml names, or one in the indentation of the line it points at (yaml reads some as text).
  if (first.code === "TAB_AS_INDENT" || at.text.slice(0, at.indent).includes("\t"))
    return [problem(at, "this line is indented with a tab; YAML indents with spaces only", 1)];
  // Unexplained: on the line's first character when yaml points at its indentation.
  const document = tree.find((token): token is CST.Document => token.type === "document"); // the first, as composed
  return [explain(first, document, placeOf) ?? problem(at, `YAML syntax error: ${plainMessage(first)}`, Math.max(at.col, at.indent + 1))];
}

/** yaml's message without its own "at line L, column C" and source excerpt. */
const plainMessage = (error: YAMLError): string => error.message.replace(/ at line \d+, column \d+[\s\S]*$/, "").trim();
const problem = (at: Place, message: string, col = at.indent + 1): TextProblem => ({ line: at.line, col, message });
const quote = (at: Place): string => `line ${at.line} (\`${at.text.trim()}\`)`;
const spaces = (n: number): string => `${n} space${n === 1 ? "" : "s"}`;
const CLOSING: Readonly<Record<string, string>> = { "{": "}", "[": "]" };
const neverClosed = (at: Place, open: string) => problem(at, `this \`${open}\` is never closed with \`${CLOSING[open]}\``, at.col);

function explain(error: YAMLError, document: CST.Document | undefined, placeOf: (offset: number) => Place): TextProblem | undefined {
  const [at] = error.pos;
  const collections = [...collectionsIn(document?.value)];
  const items = collections.flatMap((c): CST.CollectionItem[] => (c.type === "flow-collection" ? [] : c.items));
  if (error.code === "BLOCK_AS_IMPLICIT_KEY") return overIndented(items, at, placeOf);
  if (error.code !== "BAD_INDENT") return undefined;
  // yaml notices a `{` or `[` never closed at the next line; point at the bracket.
  const open = collections.findLast((c) => c.type === "flow-collection" && c.offset < at && c.end[0]?.source !== CLOSING[c.start.source]);
  if (open?.type === "flow-collection") return neverClosed(placeOf(open.offset), open.start.source);
  // The item out of line with its collection: the first after where yaml points (the end of the item before it).
  const next = Math.min(...items.map(startOf).filter((start) => start >= at));
  if (next === Infinity) return undefined;
  const line = placeOf(next);
  return underIndented(line, levelsAbove(document?.value, next - line.col + 1, placeOf));
}

/** Every collection under a token, outer before inner. */
function* collectionsIn(token: CST.Token | null | undefined): Generator<CST.BlockMap | CST.BlockSequence | CST.FlowCollection> {
  if (token?.type !== "block-map" && token?.type !== "block-seq" && token?.type !== "flow-collection") return;
  yield token;
  for (const item of token.items) for (const inner of [item.key, item.value]) yield* collectionsIn(inner);
}

/** Where an item's own text starts (its `-`, `?`, anchor, tag or key), after the blanks and comments before it. */
const startOf = ({ start, key, sep, value }: CST.CollectionItem): number =>
  [...start, key, ...(sep ?? []), value].find((t) => t && !["space", "newline", "comment"].includes(t.type))?.offset ?? Infinity;

/**
 * The indents a line starting at `lineStart` could line up with, outermost first: each block collection
 * open there, at its last item when that starts its line (not `a` in `- a: 1`), and a block scalar's text.
 */
function levelsAbove(token: CST.Token | undefined, lineStart: number, placeOf: (offset: number) => Place): Place[] {
  if (token?.type === "block-scalar") {
    const eol = token.props.at(-1);
    const first = eol?.type === "newline" ? placeOf(eol.offset + eol.source.length) : undefined;
    return first && first.line < placeOf(lineStart).line && first.text.trim() ? [first] : [];
  }
  if (token?.type !== "block-map" && token?.type !== "block-seq") return [];
  const item = token.items.findLast((i) => startOf(i) < lineStart);
  if (!item) return [];
  const at = placeOf(startOf(item));
  const inner = levelsAbove(item.value, lineStart, placeOf);
  return at.col === token.indent + 1 && at.indent === token.indent ? [at, ...inner] : inner;
}

/** A line indented between two levels above it: name the nearest on either side, each with a line that has it. */
function underIndented(line: Place, levels: readonly Place[]): TextProblem | undefined {
  if (levels.length === 0 || levels.some((l) => l.indent === line.indent)) return undefined; // lined up: not an indentation mistake
  const deeper = levels.filter((l) => l.indent > line.indent);
  const nearest = [deeper.findLast((l) => l.indent === deeper[0]?.indent), levels.findLast((l) => l.indent < line.indent)];
  const fix = nearest.flatMap((l) => (l ? [`${spaces(l.indent)} like ${quote(l)}`] : [])).join(", or by ");
  return problem(line, `this line is indented by ${spaces(line.indent)}, which matches no line above it: indent it by ${fix}`);
}

/**
 * A line indented more than the line before it, which has a value (`key: value`): yaml reads both as a
 * mapping nested in the value and reports the line before. Point at the indented line (the mapping's `:`).
 */
function overIndented(items: readonly CST.CollectionItem[], at: number, placeOf: (offset: number) => Place): TextProblem | undefined {
  const parent = items.find((item) => item.value?.offset === at);
  const colon = parent?.value?.type === "block-map" ? parent.value.items[0]?.sep?.find((t) => t.type === "map-value-ind") : undefined;
  const [reported, indented] = [placeOf(at), colon && placeOf(colon.offset)];
  if (!parent || !indented || indented.line === reported.line) return undefined;
  const fix = `indent it by ${spaces(placeOf(startOf(parent)).col - 1)} like line ${reported.line}, or remove the value of line ${reported.line}`;
  return problem(indented, `this line is indented more than ${quote(reported)}, which already has a value: ${fix}`);
}
