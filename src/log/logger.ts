/** Human-readable lines on stderr by default, or JSON lines for machines. */
import { writeSync } from "node:fs";
import { escapeControls } from "./escape.js";

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export type LogFormat = "text" | "json";
export type LogLevel = "info" | "warn" | "error";

export interface LoggerOptions {
  /** Drop info lines: only warnings and errors get through (`--quiet`). */
  quiet?: boolean;
}

/**
 * One record as a line: in JSON `{"time","level","msg",...fields}`; in text the message alone,
 * prefixed with its level unless it is info (the fields are for machines only).
 */
export function formatRecord(format: LogFormat, level: LogLevel, message: string, fields?: Record<string, unknown>): string {
  // Messages carry text from outside (flag keys, file names, URL documents, reason phrases): no
  // control character reaches the terminal raw, and a record is one line, so a line feed in a
  // flag key cannot fake another record. JSON escapes C0 itself; the rest is escaped the JSON way.
  if (format === "json") return `${escapeControls(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }))}\n`;
  return `${level === "info" ? "" : `${level}: `}${escapeControls(message)}\n`;
}

/**
 * Info lines for stderr are written together once per turn of the event loop: a burst of ten
 * thousand streams opening costs a few writes instead of ten thousand (each a system call on a
 * pipe). Warnings and errors go out at once, after whatever is pending, and anything still
 * pending when the process exits is written synchronously.
 */
let pending = "";
let exitHooked = false;

/** Writes the pending info lines now (before writing elsewhere, to keep the order). */
export function flushLog(): void {
  if (pending === "") return;
  const text = pending;
  pending = "";
  process.stderr.write(text);
}

function stderrLine(line: string, level: LogLevel): void {
  if (level !== "info") {
    flushLog();
    process.stderr.write(line);
    return;
  }
  if (pending === "") {
    setImmediate(flushLog);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", () => {
        if (pending !== "") writeSync(2, pending);
        pending = "";
      });
    }
  }
  pending += line;
  if (pending.length > 64 * 1024) flushLog();
}

export function createLogger(
  format: LogFormat = "text",
  write: (line: string, level: LogLevel) => void = stderrLine,
  options: LoggerOptions = {},
): Logger {
  const emit = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (level === "info" && options.quiet) return;
    write(formatRecord(format, level, message, fields), level);
  };
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
