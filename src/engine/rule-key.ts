/**
 * A text that identifies a targeting rule as written, for compiling each distinct rule once
 * (see compile.ts). Equal texts mean equal rules: strings are quoted, key order is kept, and
 * numbers JSON cannot tell apart (-0, NaN, ±Infinity; a YAML file can write `.inf`) keep their
 * own text. undefined for anything that is not plain data: such a rule is compiled on its own.
 */
export function ruleKey(rule: unknown): string | undefined {
  // JSON's own text where JSON tells every value apart (the writer below gives the same text
  // there, one part at a time): most rules, at a fraction of the cost.
  if (isJsonExact(rule)) return JSON.stringify(rule);
  const parts: string[] = [];
  return write(rule, parts) ? parts.join("") : undefined;
}

/** Plain data whose JSON text is its own: no -0, NaN or ±Infinity, no holes, plain objects. */
function isJsonExact(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return value === 0 ? !Object.is(value, -0) : Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (isHole(value, i) || !isJsonExact(value[i])) return false;
        return true;
      }
      if (!isPlainRecord(value)) return false;
      for (const key of Object.keys(value)) if (!isJsonExact((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

/** A hole of a sparse array is not JSON (JSON.stringify would write it as null). */
function isHole(list: readonly unknown[], index: number): boolean {
  return !(index in list);
}

/** An object literal, or one without a prototype: not a class instance such as a Date. */
function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
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
    if (isHole(list, i) || !write(list[i], parts)) return false;
  }
  parts.push("]");
  return true;
}

function writeRecord(record: object, parts: string[]): boolean {
  if (!isPlainRecord(record)) return false;
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
