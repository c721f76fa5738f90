/** Option parsers shared by the commands: a bad value is a one-line usage error. */
import { InvalidArgumentError } from "commander";
import { collectPairs, createEnricher, EnrichmentError, type ContextEnrichment } from "../fixture/enrich.js";
import { FaultRulesError, parseFaultArgument, type FaultRule } from "../fixture/fault-rules.js";

/**
 * A server address given on the command line, with `path` appended unless it already ends with
 * it (a path prefix, as behind a proxy, is kept).
 */
export function serverUrl(value: string, path: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:8080");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:8080");
  const base = url.pathname.replace(/\/+$/, "");
  if (!base.endsWith(path)) url.pathname = `${base}${path}`;
  return url;
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("must be an integer from 0 to 65535 (0 = any free port)");
  return n;
}

export const parsePositiveInteger =
  (what: string) =>
  (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError(`${what} must be a positive integer`);
    return n;
  };

export const parseNonNegativeNumber =
  (what: string) =>
  (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${what} must be a non-negative number`);
    return n;
  };

export const parsePositiveNumber =
  (what: string) =>
  (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${what} must be a positive number`);
    return n;
  };

/** `1mb`, `512kb`, `65536` -> bytes. */
export function parseByteSize(value: string): number {
  const match = /^(\d+)\s*(b|kb|kib|mb|mib)?$/i.exec(value.trim());
  if (!match) throw new InvalidArgumentError("must be a size such as 65536, 512kb or 1mb");
  const unit = (match[2] ?? "b").toLowerCase();
  const factor = unit.startsWith("k") ? 1024 : unit.startsWith("m") ? 1024 * 1024 : 1;
  return Number(match[1]) * factor;
}

/** `--context-value` / `--context-from-header`, repeatable: `KEY=VALUE` pairs read as flagd reads them. */
export const parseContextPairs =
  (kind: keyof ContextEnrichment) =>
  (value: string, previous?: Record<string, string>): Record<string, string> => {
    try {
      const pairs = collectPairs(value, previous);
      createEnricher({ [kind]: pairs }); // the same checks the server makes, as a usage error
      return pairs;
    } catch (error) {
      if (error instanceof EnrichmentError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };

/** `--fault JSON`, repeatable: each a rule or a list of rules, checked as the server checks them. */
export function parseFaults(value: string, previous: FaultRule[] = []): FaultRule[] {
  try {
    return [...previous, ...parseFaultArgument(value)];
  } catch (error) {
    if (error instanceof FaultRulesError) throw new InvalidArgumentError(error.problems.join("; "));
    throw error;
  }
}
