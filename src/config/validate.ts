/**
 * Is a document right? First the published schema (every ajv error mapped back to its YAML
 * node), then the rules a schema cannot say well (variant types, defaultVariant, URLs), then
 * the engine's own checks (operators, `$ref`s) located in the file that wrote them.
 */
import type { ErrorObject } from "ajv";
import { compileEnvironment, type CompiledEnvironment } from "../engine/index.js";
import type { CompileMemo } from "../engine/compile.js";
import type { MergedEnvironment } from "./merge.js";
import { validateEnvironmentSchema } from "./schema.js";
import { docProblem, formatPath, type Anchor, type EnvDocument } from "./positions.js";
import type { JsonPath, Problem } from "../model/types.js";
import { isRecord, setOwn } from "../model/json.js";

export interface DocumentCheck {
  /** Problems that take the whole environment out. */
  problems: Problem[];
  /** Problems confined to one flag, by flag key: that flag alone is not served. */
  flagProblems: Map<string, Problem[]>;
  /** Problems confined to one segment, by name: the flags that use it are not served. */
  segmentProblems: Map<string, Problem[]>;
  /** The document passed the published schema as a whole (merging need not check its parts again). */
  schemaValid: boolean;
  /** How many flags were checked (the others were known valid). */
  flagsChecked: number;
}

/**
 * Checks a document. Flag values in `knownValid` (they passed every check before; the loader reuses
 * unchanged ones) are left out, and those found valid are added: a flag's checks depend on it alone.
 */
export function validateDocument(doc: EnvDocument, knownValid?: WeakSet<object>): DocumentCheck {
  const value = withoutKnownFlags(doc.value, knownValid);
  const check: DocumentCheck = { problems: [], flagProblems: new Map(), segmentProblems: new Map(), schemaValid: true, flagsChecked: 0 };
  const add = (path: JsonPath, problem: Problem) => {
    const scope = scopeOf(doc.value, path);
    if (scope === "environment") check.problems.push(problem);
    else if ("flag" in scope) addTo(check.flagProblems, scope.flag, problem);
    else addTo(check.segmentProblems, scope.segment, problem);
  };
  const semantic = isRecord(value) ? semanticProblems(doc, value) : [];
  if (!validateEnvironmentSchema(value)) {
    check.schemaValid = false;
    // Said better by a semantic problem about the same place.
    const covered = semantic.filter(({ covers }) => covers).map(({ path }) => path);
    for (const { path, problem } of schemaProblems(doc, value, validateEnvironmentSchema.errors ?? [])) {
      if (!covered.some((at) => at.every((seg, i) => path[i] === seg))) add(path, problem);
    }
  }
  for (const { path, problem } of semantic) add(path, problem);
  for (const { path, problem } of nonFiniteNumbers(doc, value)) add(path, problem);
  const flags = isRecord(value) ? value.flags : undefined;
  check.flagsChecked = Array.isArray(flags) ? flags.length : isRecord(flags) ? Object.keys(flags).length : 0;
  if (knownValid && isRecord(flags) && check.problems.length === 0) {
    for (const key of Object.keys(flags)) {
      const flag = flags[key];
      if (isRecord(flag) && !check.flagProblems.has(key)) knownValid.add(flag);
    }
  }
  return check;
}

/** The document with the flags of its `flags:` map that are known valid left out (itself when there are none). */
function withoutKnownFlags(value: unknown, knownValid: WeakSet<object> | undefined): unknown {
  if (!knownValid || !isRecord(value) || !isRecord(value.flags)) return value;
  const all = value.flags;
  const unknown = Object.keys(all).filter((key) => !isRecord(all[key]) || !knownValid.has(all[key]));
  if (unknown.length === Object.keys(all).length) return value;
  const flags: Record<string, unknown> = {};
  for (const key of unknown) setOwn(flags, key, all[key]);
  return { ...value, flags };
}

export const addTo = <K, V>(map: Map<K, V[]>, key: K, ...values: V[]): void => {
  const list = map.get(key);
  if (list) list.push(...values);
  else map.set(key, [...values]);
};

/** What a problem at `path` takes out (only what it breaks): one flag, one segment and the flags that use it, or the environment. */
function scopeOf(value: unknown, path: JsonPath): { flag: string } | { segment: string } | "environment" {
  if (!isRecord(value) || path.length < 2) return "environment";
  const [section, name] = path;
  if (section === "segments" || section === "$evaluators") return { segment: String(name) };
  if (section !== "flags") return "environment";
  if (isRecord(value.flags)) return { flag: String(name) };
  // flagd's list form: the flag is named by its `key`; without one it cannot be served alone.
  const item = Array.isArray(value.flags) && typeof name === "number" ? value.flags[name] : undefined;
  return isRecord(item) && typeof item.key === "string" && item.key !== "" ? { flag: item.key } : "environment";
}

/** A problem and the document path it is about (to tell what it takes out). */
interface Located {
  path: JsonPath;
  problem: Problem;
  /** The schema's errors at or under `path` say the same less well: they are left out. */
  covers?: boolean;
}

/** ajv's errors as readable problems, each at the YAML node it is about. */
function schemaProblems(doc: EnvDocument, value: unknown, errors: readonly ErrorObject[]): Located[] {
  const problems: Located[] = [];
  for (const err of errors) {
    const path = toJsonPath(value, err.instancePath);
    // Noise: `if` repeats its branch's errors, `propertyNames` repeats the inner error, and the
    // typed-variants `anyOf` says "must be boolean / string / number / object" for every value:
    // checkVariants says it in one sentence instead.
    if (err.keyword === "if" || err.keyword === "propertyNames" || isVariantTypeError(err, path)) continue;
    const located = describeSchemaError(err, path);
    if (err.keyword === "additionalProperties" && path.length === 0 && located.path[0] === "environments")
      located.message = "unknown property 'environments' ('environments' is only allowed in a single file given as PATH)";
    // Named by the error's own path: a problem with a key names the mapping that holds it.
    const where = formatPath(path);
    const message = where ? `${where}: ${located.message}` : located.message;
    problems.push({ path: located.path, problem: docProblem(doc, located.path, message, located.anchor) });
  }
  return problems;
}

const isVariantTypeError = (err: ErrorObject, path: JsonPath): boolean =>
  path[0] === "flags" && path[2] === "variants" && (err.keyword === "anyOf" || err.schemaPath.includes("/anyOf/"));

/** One ajv error in words, and the path (and anchor) of the node it is about: what every schema check here reports. */
export function describeSchemaError(err: ErrorObject, path: JsonPath): { path: JsonPath; message: string; anchor?: Anchor } {
  const params = err.params as Record<string, unknown>;
  const parent = (err.parentSchema ?? {}) as Record<string, unknown>;
  switch (err.keyword) {
    case "additionalProperties": {
      const name = String(params.additionalProperty);
      const allowed = Object.keys((parent.properties ?? {}) as object);
      const hint = allowed.length > 0 ? ` (expected ${allowed.join(", ")})` : "";
      return { path: [...path, name], message: `unknown property '${name}'${hint}`, anchor: "key" };
    }
    case "required":
      return { path, message: `missing required property '${String(params.missingProperty)}'`, anchor: "key" };
    case "type":
      return { path, message: `must be ${typeList(params.type)}` };
    case "enum":
      return { path, message: `must be one of ${(params.allowedValues as unknown[]).map(String).join(", ")}` }; // (join alone writes null as nothing)
    case "pattern":
      return { path, message: typeof parent.patternErrorMessage === "string" ? parent.patternErrorMessage : (err.message ?? "") };
    case "minLength":
    case "maxLength": {
      const n = Number(params.limit);
      if (err.propertyName !== undefined) {
        // A key, not a value, is wrong (only empty names are refused).
        return { path: [...path, err.propertyName], message: "names must not be empty", anchor: "key" };
      }
      if (err.keyword === "minLength" && n === 1) return { path, message: "must not be empty" };
      return { path, message: `must be at ${err.keyword === "minLength" ? "least" : "most"} ${n} characters long` };
    }
    case "minProperties":
      return { path, message: path.at(-1) === "variants" ? "must have at least one variant" : "must not be empty" };
    case "uniqueItems": // point at the second of the two equal items
      return { path: [...path, Math.max(Number(params.i), Number(params.j))], message: "lists the same value twice" };
    default:
      return { path, message: err.message ?? err.keyword };
  }
}

/** "an object", "a string or null", "a string, number or boolean". */
function typeList(type: unknown): string {
  const names = (Array.isArray(type) ? type : [type]).map(String);
  const first = names[0] ?? "value";
  const article = first === "null" ? "" : /^[aeiou]/.test(first) ? "an " : "a ";
  return article + (names.length === 1 ? first : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`);
}

/** ajv's JSON Pointer -> path, with list indices as numbers (found by walking the data). */
export function toJsonPath(value: unknown, pointer: string): JsonPath {
  if (pointer === "") return [];
  const path: (string | number)[] = [];
  let node = value;
  for (const raw of pointer.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      path.push(Number(seg));
      node = node[Number(seg)];
    } else {
      path.push(seg);
      node = isRecord(node) ? node[seg] : undefined;
    }
  }
  return path;
}

/** What the schema cannot say (well): variant types, defaultVariant, flags named like fields, notification URLs. */
function semanticProblems(doc: EnvDocument, value: Record<string, unknown>): Located[] {
  const problems: Located[] = [];
  const report = (path: JsonPath, message: string) => problems.push({ path, problem: docProblem(doc, path, message) });
  // Paths are made only for a problem: this runs over every flag of a file.
  const checkFlag = (id: string | number, flag: unknown) => {
    if (!isRecord(flag) || !isRecord(flag.variants)) return;
    for (const [at, message] of checkVariants(flag.variants)) report(["flags", id, "variants", ...at], message);
    const dv = flag.defaultVariant;
    if (dv === undefined || dv === null || (typeof dv === "string" && Object.hasOwn(flag.variants, dv))) return;
    const path = ["flags", id, "defaultVariant"];
    const names = Object.keys(flag.variants)
      .map((n) => `'${n}'`)
      .join(", ");
    if (typeof dv === "string") report(path, `defaultVariant '${dv}' is not one of the variants (${names})`);
    else {
      const what = Array.isArray(dv) ? "a list" : typeof dv === "object" ? "a mapping" : `${typeof dv} ${JSON.stringify(dv)}`;
      const quoted = typeof dv === "boolean" || typeof dv === "number" ? ` (quote it, "${String(dv)}", if a variant is named so)` : "";
      const message = `${formatPath(path)}: must name one of the variants (${names}), or be null; this is ${what}${quoted}`;
      problems.push({ path, problem: docProblem(doc, path, message), covers: true });
    }
  };
  if (Array.isArray(value.flags)) value.flags.forEach((flag, i) => checkFlag(i, flag));
  else if (isRecord(value.flags)) for (const key of Object.keys(value.flags)) checkFlag(key, value.flags[key]);
  if (isRecord(doc.value) && isRecord(doc.value.flags)) problems.push(...flagsNamedLikeFields(doc, doc.value.flags));
  if (Array.isArray(value.notifications)) {
    value.notifications.forEach((n, i) => {
      // Skipped while a `${NAME}` is left unexpanded: the unset variable is the problem reported.
      if (!isRecord(n) || typeof n.url !== "string" || n.url === "" || UNEXPANDED.test(n.url)) return;
      // The URL may hold a secret token (Slack's do): say what is wrong, never echo it.
      const path = ["notifications", i, "url"];
      if (!isHttpUrl(n.url)) report(path, `${formatPath(path)}: must be an http or https URL`);
    });
  }
  return problems;
}

const UNEXPANDED = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;

const FLAG_FIELDS = new Set(["state", "variants", "defaultVariant", "targeting", "metadata"]);

/**
 * A flag named like a flag's field (`targeting:` indented two spaces instead of four) is a problem of
 * it and of the flag above, which as written lacks that field and would serve without it, unreported.
 */
function flagsNamedLikeFields(doc: EnvDocument, flags: Record<string, unknown>): Located[] {
  const found: Located[] = [];
  const keys = Object.keys(flags);
  keys.forEach((key, i) => {
    if (!FLAG_FIELDS.has(key)) return;
    const above = keys.slice(0, i).findLast((k) => !FLAG_FIELDS.has(k));
    const consequence = above ? `, and flag '${above}' above it has no ${key}` : "";
    const message = `flags.${key}: '${key}' is a flag's field, not a flag name: is it indented too little? As written it is a flag of its own${consequence}`;
    const problem = docProblem(doc, ["flags", key], message, "key");
    found.push({ path: ["flags", key], problem, covers: true });
    if (above) found.push({ path: ["flags", above], problem });
  });
  return found;
}

const isHttpUrl = (text: string): boolean => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol);

const variantType = (v: unknown): string | undefined =>
  typeof v === "boolean" || typeof v === "string" || typeof v === "number" ? typeof v : isRecord(v) ? "object" : undefined;

/** flagd's typed flags: all variants boolean, all string, all number, or all object. Paths are inside `variants`. */
function checkVariants(variants: Record<string, unknown>): [JsonPath, string][] {
  const problems: [JsonPath, string][] = [];
  let first: [string, string] | undefined;
  for (const name of Object.keys(variants)) {
    const value = variants[name];
    const type = variantType(value);
    if (type === undefined) {
      const what = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
      problems.push([[name], `variant '${name}' is ${what}: variants must be booleans, strings, numbers or objects`]);
    } else if (!first) {
      first = [name, type];
    } else if (type !== first[1]) {
      problems.push([
        [name],
        `variant '${name}' is ${typeList(type)} but variant '${first[0]}' is ${typeList(first[1])}: all variants of a flag must have the same type`,
      ]);
    }
  }
  return problems;
}

/** Numbers JSON cannot carry (`.inf`, `.nan`, integers past 1e308) would reach clients as null. */
function nonFiniteNumbers(doc: EnvDocument, value: unknown): Located[] {
  const found: Located[] = [];
  // One path for the whole walk (it visits every value of a big file), copied only for a problem.
  const path: (string | number)[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === "number") {
      if (Number.isFinite(node)) return;
      const at = [...path];
      const message = `${formatPath(at)}: must be a finite number (.inf and .nan have no JSON form)`;
      found.push({ path: at, problem: docProblem(doc, at, message) });
    } else if (typeof node === "object" && node !== null) {
      for (const [key, child] of Array.isArray(node) ? node.entries() : Object.entries(node)) {
        path.push(key);
        walk(child);
        path.pop();
      }
    }
  };
  walk(value);
  return found;
}

export interface LocatedCompilation extends Omit<CompiledEnvironment, "errors"> {
  problems: Problem[];
}

/** Compiles targeting; each engine error is located in the file that wrote the flag or segment. */
export function compileAndLocate(merged: MergedEnvironment, brokenSegments: Iterable<string>, previous?: CompileMemo): LocatedCompilation {
  const first = merged.docs[0]!; // load.ts builds no environment without a document
  const { errors, ...compiled } = compileEnvironment(merged.config, { brokenSegments, previous });
  const problems = errors.map((e) => {
    const [section, name, ...rest] = e.path;
    const origins = section === "flags" ? merged.origins.flags : section === "segments" ? merged.origins.segments : undefined;
    const origin = origins?.get(String(name));
    if (origin) return docProblem(origin.doc, [...origin.path, ...rest], e.message, rest.length === 0 ? "key" : "value");
    return docProblem(first, e.path, e.message);
  });
  return { ...compiled, problems };
}
