/** Human-readable lines on stderr by default, or JSON lines for machines. */

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
  if (format === "json") return `${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`;
  return `${level === "info" ? "" : `${level}: `}${message}\n`;
}

export function createLogger(
  format: LogFormat = "text",
  write: (line: string) => void = (l) => process.stderr.write(l),
  options: LoggerOptions = {},
): Logger {
  const emit = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (level === "info" && options.quiet) return;
    write(formatRecord(format, level, message, fields));
  };
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
