/**
 * Text from outside (flag keys, variants, file names, session data, URL documents, HTTP reason
 * phrases) on its way to a terminal: control characters written out as `\uXXXX`, so none can
 * clear the screen, set the window title, colour a line, or fake one. The same escape is valid
 * inside a JSON string, so JSON output passes through unchanged in meaning.
 *
 * The rule every terminal-bound path follows: a line is escaped whole, line breaks included (a
 * log record, a table row, a value in a line); output of several lines is built as lines, each
 * escaped, then joined. `keepLines` is for text whose line breaks are already ours.
 */

/**
 * C0 controls (tab and line feed included), DEL, C1 controls, the line and paragraph separators
 * (U+2028, U+2029: line breaks to some terminals, editors and log viewers), and the bidirectional
 * marks and overrides that reorder what is shown.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
/** The same, but a line feed stays: for text made of lines whose own contents were escaped. */
const CONTROL_BUT_LINE_FEED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const escapeOne = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * `text` safe to print: every control character escaped, a line feed too. `keepLines`: line
 * feeds stay (text of several lines, each already escaped); everything else is still escaped.
 */
export function escapeControls(text: string, options: { keepLines?: boolean } = {}): string {
  return text.replace(options.keepLines ? CONTROL_BUT_LINE_FEED : CONTROL, escapeOne);
}

/** Lines as one text: each escaped whole (a line feed inside one cannot fake another), joined. */
export const escapeLines = (lines: readonly string[]): string => lines.map((line) => escapeControls(line)).join("\n");
