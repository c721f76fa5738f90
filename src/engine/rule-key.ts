/**
 * A text that identifies a targeting rule as written, for compiling each distinct rule once
 * (see compile.ts). Equal texts mean equal rules: strings are quoted, key order is kept, and
 * numbers JSON cannot tell apart (-0, NaN, ±Infinity; a YAML file can write `.inf`) keep their
 * own text. undefined for anything that is not plain data: such a rule is compiled on its own.
 */
export function ruleKey(rule: unknown): string | undefined {
  const parts: string[] = [];
  return write(rule, parts) ? parts.join("") : undefined;
}

function write(value: unknown, parts: string[]): boolean {
  switch (typeof value) {
    case "string":
      parts.push(JSON.stringify(value));
      return true;
    case "number":
      parts.push(Object.is(value, -0) ? "-0" : String(value));
      return true;
    case "boolean":
      parts.push(value ? "true" : "false");
      return true;
    case "object":
      return value === null ? (parts.push("null"), true) : Array.isArray(value) ? writeArray(value, parts) : writeRecord(value, parts);
    default:
      return false;
  }
}

function writeArray(list: unknown[], parts: string[]): boolean {
  parts.push("[");
  for (let i = 0; i < list.length; i++) {
    if (i > 0) parts.push(",");
    if (!(i in list) || !write(list[i], parts)) return false; // a hole is not JSON
  }
  parts.push("]");
  return true;
}

function writeRecord(record: object, parts: string[]): boolean {
  const proto = Object.getPrototypeOf(record);
  if (proto !== Object.prototype && proto !== null) return false;
  parts.push("{");
  let first = true;
  for (const key of Object.keys(record)) {
    parts.push(first ? "" : ",", JSON.stringify(key), ":");
    first = false;
    if (!write((record as Record<string, unknown>)[key], parts)) return false;
  }
  parts.push("}");
  return true;
}
