/** Text from outside on its way to a terminal: control characters escaped, in tables and log lines. */
import { describe, expect, it } from "vitest";
import { formatTable } from "../../src/cli/session.js";
import { escapeControls } from "../../src/log/escape.js";
import { createLogger, formatRecord, type LogLevel } from "../../src/log/logger.js";

/** Clear screen, window title, a coloured fake row, a C1 CSI, a bidi override. */
const HOSTILE = "a\u001b[2J\u001b]0;pwned\u0007\n\u001b[32mok fake-row\u001b[0m\u009b31m\u202eb\u007f";
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;

describe("escapeControls", () => {
  it("writes every control character as \\uXXXX, valid inside JSON strings too", () => {
    expect(escapeControls(HOSTILE)).toBe(
      "a\\u001b[2J\\u001b]0;pwned\\u0007\\u000a\\u001b[32mok fake-row\\u001b[0m\\u009b31m\\u202eb\\u007f",
    );
    // Line feeds kept for text made of escaped lines; a tab or line separator never is.
    expect(escapeControls("line 1\nline 2\tend\u001b\u2028\u2029", { keepLines: true })).toBe(
      "line 1\nline 2\\u0009end\\u001b\\u2028\\u2029",
    );
    expect(escapeControls("a\tb\u2028c\u061cd")).toBe("a\\u0009b\\u2028c\\u061cd");
    expect(escapeControls("plain text, é € 😀")).toBe("plain text, é € 😀");
    expect(JSON.parse(escapeControls(JSON.stringify({ k: HOSTILE })))).toEqual({ k: HOSTILE });
  });

  it("log lines, text or JSON, carry no raw control character", () => {
    const lines: string[] = [];
    for (const format of ["text", "json"] as const) {
      const logger = createLogger(format, (line: string, _level: LogLevel) => void lines.push(line));
      logger.error(`flags.${HOSTILE}: problem`, { key: HOSTILE });
      logger.info(HOSTILE);
    }
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line.slice(0, -1)).not.toMatch(RAW);
    // One record, one line: the line feed in the message cannot fake a second record.
    expect(lines[0]).toBe(
      `error: flags.a\\u001b[2J\\u001b]0;pwned\\u0007\\u000a\\u001b[32mok fake-row\\u001b[0m\\u009b31m\\u202eb\\u007f: problem\n`,
    );
    expect(JSON.parse(lines[2]!)).toMatchObject({ level: "error", msg: `flags.${HOSTILE}: problem`, key: HOSTILE });
    expect(formatRecord("text", "warn", "x\u001b[31my")).toBe("warn: x\\u001b[31my\n");
  });

  it("a table's cells are escaped whole: no raw control, and a newline cannot fake a row", () => {
    const table = formatTable(
      ["FLAG", "CONTEXT"],
      [
        [HOSTILE, "{}"],
        ["b", "{}"],
      ],
    );
    expect(table).not.toMatch(RAW);
    expect(table.split("\n")).toHaveLength(3);
  });
});
