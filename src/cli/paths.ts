/**
 * What the commands share and can import cheaply: where the package and the configuration are,
 * how paths are shown, the version, and writing lines to stdout and stderr.
 */
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { escapeControls } from "../log/escape.js";

/** The package root (holds package.json, schema/ and the bundled example). */
export const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const BUNDLED_EXAMPLE = fileURLToPath(new URL("../../flags.example.yaml", import.meta.url));
export const INSTALLED_SCHEMA = fileURLToPath(new URL("../../schema/flagserve.schema.json", import.meta.url));

export const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export const STATE_DIR_HELP = "where keys and the admin token are kept (default: see flagserve keys dir)";

export const PATH_ARGUMENT_HELP =
  "directory of environment files, one file, or an http(s):// URL (default: ./flags, else the bundled example)";

/** PATH, else `./flags`, else the bundled example (so the first run always serves something). */
export function resolveConfigPath(path: string | undefined): { path: string; bundled: boolean } {
  if (path !== undefined) return { path, bundled: false };
  if (existsSync("flags")) return { path: "flags", bundled: false };
  return { path: BUNDLED_EXAMPLE, bundled: true };
}

/** A file as a person wants to read it: relative to the working directory when inside it. */
export function displayPath(file: string, cwd: string = process.cwd()): string {
  if (file === "" || !isAbsolute(file)) return file;
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** Somewhere text is written: a stream, or anything with its `write`. */
export interface TextSink {
  write(text: string): unknown;
}

/** Where the commands print: this process's stdout and stderr, unless runCli (main.ts) was given others. */
export const output: { stdout: TextSink; stderr: TextSink } = { stdout: process.stdout, stderr: process.stderr };

/**
 * Text on stdout (a closed pipe, `flagserve ... | head`, is tolerated by main.ts). Its line feeds
 * stay: output of several lines is built with each line escaped whole (log/escape.ts's
 * escapeLines), so a line feed from outside is already `\u000a`; every other control is escaped here.
 */
export const out = (text: string): void => void outText(`${text}\n`);
/**
 * `out` without the line feed at the end: text written as it comes (a report written as a run
 * goes). A promise when stdout is full (a pipe whose reader is behind), resolved once it drains.
 */
export const outText = (text: string): Promise<void> | undefined => {
  const sink = output.stdout;
  if (sink.write(escapeControls(text, { keepLines: true })) !== false || !("once" in sink)) return undefined;
  return once(sink as NodeJS.WritableStream, "drain").then(() => undefined);
};
/** One line on stderr (a message): escaped whole, so a line feed from outside cannot fake another line. */
export const err = (line: string): void => {
  output.stderr.write(`${escapeControls(line)}\n`);
};

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
