/**
 * Text from outside (flag keys, session data, URL documents, HTTP reason phrases) on its way to
 * a terminal: control characters written out as `\uXXXX`, so none can clear the screen, set
 * the window title, colour a line or fake one. The same escape is valid inside a JSON string,
 * so JSON output passes through unchanged in meaning.
 */

/** C0 controls, DEL, C1 controls, and the bidirectional overrides that reorder what is shown. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, but a line break (and tab) stay: for whole lines of output, not single cells. */
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escapeOne = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * `text` safe to print: every control character escaped. `keepLines`: newlines and tabs stay
 * (output made of several lines); otherwise they are escaped too (a table cell, one log field).
 */
export function escapeControls(text: string, options: { keepLines?: boolean } = {}): string {
  return text.replace(options.keepLines ? CONTROL_BUT_LINES : CONTROL, escapeOne);
}
