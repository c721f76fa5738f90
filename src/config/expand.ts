/**
 * `${NAME}` in notification settings comes from the process environment, so webhook URLs and
 * secrets stay out of the files. Nowhere else: a flag value that happens to contain `${X}`
 * must be served exactly as written.
 */
import { docProblem, type EnvDocument, type JsonPath } from "./positions.js";
import type { Problem } from "../model/types.js";
import { isRecord, setOwn } from "../model/json.js";

export type EnvVars = Record<string, string | undefined>;

/** `${NAME}` is replaced; `$${NAME}` stands for a literal `${NAME}`. */
const REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Expands every string under `notifications` in place; returns the variables that are not set. */
export function expandNotifications(doc: EnvDocument, env: EnvVars): Problem[] {
  const value = doc.value;
  if (!isRecord(value) || !Array.isArray(value.notifications)) return [];
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
    if (Array.isArray(node)) node.forEach((item, i) => (node[i] = walk(item, [...path, i])));
    else if (isRecord(node)) for (const key of Object.keys(node)) setOwn(node, key, walk(node[key], [...path, key]));
    return node;
  };
  walk(value.notifications, ["notifications"]);
  return problems;
}
