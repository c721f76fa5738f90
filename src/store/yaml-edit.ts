/**
 * Byte-preserving YAML edits: one string value replaced by splicing its source range, so every
 * other byte of the file (comments, flow collections, quoting, line endings) stays as it was.
 * Used by `keys rotate` (the API key) and by the dashboard's save to file (a flag's state or
 * default variant).
 */
import type { Scalar } from "yaml";
import { yaml } from "../config/yaml-package.js";

/** `value` as YAML source in the style the old value was written in (plain when it reads back the same). */
export function scalarSource(old: Scalar | undefined, value: string): string {
  const { parseDocument, Scalar } = yaml();
  if (old?.type === Scalar.QUOTE_SINGLE) return `'${value.replaceAll("'", "''")}'`;
  const plainAllowed = old === undefined || old.type === Scalar.PLAIN;
  // `true`, `null`, `12` are not strings when plain.
  if (plainAllowed && /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(value) && parseDocument(`k: ${value}`).get("k") === value) return value;
  return JSON.stringify(value);
}

/**
 * `source` with the string at `path` replaced by `value`, or undefined when there is none.
 * A splice on the value's source range, checked by parsing the result.
 */
export function replaceStringInSource(source: string, path: string[], value: string, file: string): string | undefined {
  const { isScalar, parseDocument } = yaml();
  const doc = parseDocument(source);
  const node = doc.getIn(path, true);
  if (node === undefined) return undefined;
  if (!isScalar(node) || typeof node.value !== "string" || !node.range) {
    throw new Error(`${file}: ${path.join(".")} is not a plain string; replace it by hand`);
  }
  const [start, end] = node.range;
  const text = `${source.slice(0, start)}${scalarSource(node, value)}${source.slice(end)}`;
  if (parseDocument(text).getIn(path) !== value) throw new Error(`${file}: could not replace ${path.join(".")} safely; replace it by hand`);
  return text;
}
