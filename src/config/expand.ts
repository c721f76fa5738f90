/**
 * `${NAME}` in notification settings comes from the process environment, so webhook URLs and
 * secrets stay out of the files. Nowhere else: a flag value that happens to contain `${X}`
 * must be served exactly as written.
 */
import { docProblem, type EnvDocument } from "./positions.js";
import type { JsonPath, Problem } from "../model/types.js";
import { isRecord, setOwn } from "../model/json.js";

export type EnvVars = Record<string, string | undefined>;

/** `${NAME}` is replaced; `$${NAME}` stands for a literal `${NAME}`. */
const REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The document with every string under `notifications` expanded (a copy: the parsed value is kept
 * for the next load, see memo.ts), and the variables that are not set.
 */
export function expandNotifications(doc: EnvDocument, env: EnvVars): { doc: EnvDocument; problems: Problem[] } {
  const value = doc.value;
  if (!isRecord(value) || !Array.isArray(value.notifications)) return { doc, problems: [] };
  const problems: Problem[] = [];
  const expand = (text: string, path: JsonPath): string =>
    text.replace(REFERENCE, (whole, escape: string, name: string) => {
      if (escape) return whole.slice(1);
      const resolved = env[name];
      if (resolved === undefined) {
        problems.push(docProblem(doc, path, `environment variable ${name} is not set`));
        return whole;
      }
      return resolved;
    });
  const walk = (node: unknown, path: JsonPath): unknown => {
    if (typeof node === "string") return expand(node, path);
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i]));
    if (!isRecord(node)) return node;
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(node)) setOwn(copy, key, walk(node[key], [...path, key]));
    return copy;
  };
  const notifications = walk(value.notifications, ["notifications"]);
  return { doc: { ...doc, value: { ...value, notifications } }, problems };
}

/** The variables a document's notifications name: their values are part of what it means. */
export function variablesOf(doc: EnvDocument, env: EnvVars): string {
  const value = doc.value;
  if (!isRecord(value) || !Array.isArray(value.notifications)) return "";
  const names = new Set([...JSON.stringify(value.notifications).matchAll(REFERENCE)].map((m) => m[2]!));
  return JSON.stringify([...names].sort().map((name) => [name, env[name] ?? null]));
}
