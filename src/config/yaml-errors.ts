/**
 * A YAML syntax error in words a person understands, at the line that is wrong. The `yaml`
 * package reports what its parser met (often at the line before the mistake, or at column 1),
 * and one misplaced line makes it report several errors: the first is the one to fix, and the
 * lines around it tell which line is out of place.
 */
import type { YAMLError } from "yaml";
import type { Problem } from "../model/types.js";

/** A problem of the text being read: its file is the caller's. */
export type TextProblem = Omit<Problem, "file">;

interface Line {
  number: number;
  text: string;
  indent: number;
}

/** One problem for a document's errors (the first, explained), or each warning when there is no error. */
export function explainYamlErrors(
  text: string,
  errors: readonly YAMLError[],
  warnings: readonly YAMLError[],
  linePos: (offset: number) => { line: number; col: number },
): TextProblem[] {
  if (errors.length === 0) return warnings.map((w) => ({ ...linePos(w.pos[0]), message: `YAML warning: ${plainMessage(w)}` }));
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0]!;
  const lines = text.split(/\r?\n/).map((line, i): Line => ({ number: i + 1, text: line, indent: indentOf(line) }));
  const { line, col } = linePos(first.pos[0]);
  const reported = lines[line - 1];
  const message = `YAML syntax error: ${plainMessage(first)}`;
  // Unexplained: on the line's first character when yaml points at its indentation.
  return [(reported && explain(first, lines, reported)) ?? { line, col: reported ? Math.max(col, reported.indent + 1) : col, message }];
}

const indentOf = (line: string): number => line.length - line.trimStart().length;
const isContent = (line: Line | undefined): line is Line =>
  line !== undefined && line.text.trim() !== "" && !line.text.trimStart().startsWith("#");
const quote = (line: Line): string => `\`${line.text.trim()}\``;
const spaces = (n: number): string => `${n} space${n === 1 ? "" : "s"}`;

/** yaml's message without its own "at line L, column C" and source excerpt. */
const plainMessage = (error: YAMLError): string => error.message.replace(/ at line \d+, column \d+[\s\S]*$/, "").trim();

function explain(error: YAMLError, lines: readonly Line[], line: Line): TextProblem | undefined {
  if (/^\t| \t/.test(line.text.slice(0, line.indent + 1)) || error.code === "TAB_AS_INDENT") {
    return { line: line.number, col: 1, message: "this line is indented with a tab; YAML indents with spaces only" };
  }
  const flow = /^Flow (map|sequence) in block collection/.exec(error.message);
  if (flow) return unclosedFlow(lines, line, flow[1] === "map" ? ["{", "}"] : ["[", "]"]);
  if (error.code === "BAD_INDENT" && isContent(line)) return underIndented(lines, line);
  if (error.code === "BLOCK_AS_IMPLICIT_KEY" || error.code === "MULTILINE_IMPLICIT_KEY") return overIndented(lines, line);
  return undefined;
}

/** The content lines before `line`, nearest first. */
function* before(lines: readonly Line[], line: Line): Generator<Line> {
  for (let i = line.number - 2; i >= 0; i--) if (isContent(lines[i])) yield lines[i]!;
}

/**
 * A line indented less than its neighbours but more than their parent: name the indentations it
 * could have, each with a line that has it.
 */
function underIndented(lines: readonly Line[], line: Line): TextProblem | undefined {
  let deeper: Line | undefined;
  let shallower: Line | undefined;
  // The open levels above the line: each earlier line less indented than all that follow it.
  let level = Infinity;
  for (const earlier of before(lines, line)) {
    if (earlier.indent >= level) continue;
    if (earlier.indent === line.indent) return undefined; // lined up with an open level: not an indentation mistake
    level = earlier.indent;
    if (earlier.indent > line.indent) deeper = earlier;
    else if (earlier.indent < line.indent) {
      shallower = earlier;
      break;
    }
  }
  const options = [deeper, shallower]
    .filter((l): l is Line => l !== undefined)
    .map((l) => `${spaces(l.indent)} like line ${l.number} (${quote(l)})`);
  const fix = options.length > 0 ? `: indent it by ${options.join(", or by ")}` : "";
  return {
    line: line.number,
    col: line.indent + 1,
    message: `this line is indented by ${spaces(line.indent)}, which matches no line above it${fix}`,
  };
}

/**
 * A line indented more than the line before it, which already has a value (`key: value`): yaml
 * reports the line before. Point at the indented line.
 */
function overIndented(lines: readonly Line[], reported: Line): TextProblem | undefined {
  const next = lines.slice(reported.number).find(isContent);
  if (!next || next.indent <= reported.indent || !/^[^#]*?:\s+[^\s#]/.test(reported.text.trim())) return undefined;
  return {
    line: next.number,
    col: next.indent + 1,
    message: `this line is indented more than line ${reported.number} (${quote(reported)}), which already has a value: indent it by ${spaces(reported.indent)} like line ${reported.number}, or remove the value of line ${reported.number}`,
  };
}

/** A `{` or `[` never closed: yaml notices at the next line; point at the line that opened it. */
function unclosedFlow(lines: readonly Line[], reported: Line, [open, close]: readonly [string, string]): TextProblem | undefined {
  const opened = [reported, ...before(lines, reported)].find((l) => l.text.split(open).length > l.text.split(close).length);
  if (!opened) return undefined;
  const col = opened.text.lastIndexOf(open) + 1;
  return { line: opened.number, col, message: `this \`${open}\` is never closed with \`${close}\`` };
}
