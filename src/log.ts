/** Human-readable lines on stderr by default, or JSON lines for machines. */

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export type LogFormat = "text" | "json";

export function createLogger(format: LogFormat = "text", write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (level: "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) => {
    if (format === "json") {
      write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`);
    } else {
      const prefix = level === "info" ? "" : `${level}: `;
      write(`${prefix}${message}\n`);
    }
  };
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
