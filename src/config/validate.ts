/**
 * Is a document right? First the published schema (every ajv error mapped back to its YAML
 * node), then the rules a schema cannot say well (variant types, defaultVariant, URLs), then
 * the engine's own checks (operators, `$ref`s) located in the file that wrote them.
 */
import type { ErrorObject } from "ajv";
import { compileEnvironment } from "../engine/index.js";
import type { CompiledFlag } from "../engine/types.js";
import type { MergedEnvironment, Origin } from "./merge.js";
import { validateEnvironmentSchema } from "./schema.js";
import { docProblem, formatPath, type Anchor, type EnvDocument, type JsonPath } from "./source.js";
import type { Problem } from "./types.js";
import { isRecord } from "./util.js";

export interface DocumentCheck {
  problems: Problem[];
  /** The document has the schema's shape, so it can be merged and compiled. */
  valid: boolean;
}

export function validateDocument(doc: EnvDocument): DocumentCheck {
  const valid = validateEnvironmentSchema(doc.value);
  const problems = valid ? [] : schemaProblems(doc, validateEnvironmentSchema.errors ?? []);
  if (isRecord(doc.value)) problems.push(...semanticProblems(doc, doc.value));
  problems.push(...nonFiniteNumbers(doc, doc.value, []));
  return { problems, valid };
}

// ---------------------------------------------------------------------------------------------
// Schema errors -> located, readable problems

function schemaProblems(doc: EnvDocument, errors: readonly ErrorObject[]): Problem[] {
  const problems: Problem[] = [];
  for (const err of errors) {
    const path = toJsonPath(doc.value, err.instancePath);
    // Noise: `if` repeats its branch's errors, `propertyNames` repeats the inner error, and the
    // typed-variants `anyOf` says "must be boolean / string / number / object" for every value:
    // checkVariants says it in one sentence instead.
    if (err.keyword === "if" || err.keyword === "propertyNames" || isVariantTypeError(err, path)) continue;
    const located = describe(err, path);
    const where = formatPath(located.path.slice(0, located.subjectDepth ?? located.path.length));
    problems.push(docProblem(doc, located.path, where ? `${where}: ${located.message}` : located.message, located.anchor));
  }
  return problems;
}

const isVariantTypeError = (err: ErrorObject, path: JsonPath): boolean =>
  path[0] === "flags" &&
  path[2] === "variants" &&
  (err.keyword === "anyOf" || err.schemaPath.includes("/anyOf/"));

interface Described {
  path: JsonPath;
  message: string;
  anchor?: Anchor;
  /** How much of `path` names the subject of the message (less when the path ends at a key). */
  subjectDepth?: number;
}

function describe(err: ErrorObject, path: JsonPath): Described {
  const params = err.params as Record<string, unknown>;
  const parent = (err.parentSchema ?? {}) as Record<string, unknown>;
  switch (err.keyword) {
    case "additionalProperties": {
      const name = String(params.additionalProperty);
      const allowed = Object.keys((parent.properties ?? {}) as object);
      const hint =
        name === "environments" && path.length === 0
          ? " ('environments' is only allowed in a single file given as PATH)"
          : allowed.length > 0
            ? ` (expected ${allowed.join(", ")})`
            : "";
      return { path: [...path, name], message: `unknown property '${name}'${hint}`, anchor: "key", subjectDepth: path.length };
    }
    case "required":
      return { path, message: `missing required property '${String(params.missingProperty)}'`, anchor: "key" };
    case "type":
      return { path, message: `must be ${typeList(params.type)}` };
    case "enum":
      return { path, message: `must be one of ${(params.allowedValues as unknown[]).join(", ")}` };
    case "pattern":
      return { path, message: typeof parent.patternErrorMessage === "string" ? parent.patternErrorMessage : err.message ?? "" };
    case "minLength":
    case "maxLength": {
      const n = Number(params.limit);
      if (err.propertyName !== undefined) {
        // A key, not a value, is wrong (only empty names are refused).
        return { path: [...path, err.propertyName], message: "names must not be empty", anchor: "key", subjectDepth: path.length };
      }
      if (err.keyword === "minLength" && n === 1) return { path, message: "must not be empty" };
      return { path, message: `must be at ${err.keyword === "minLength" ? "least" : "most"} ${n} characters long` };
    }
    case "minProperties":
      return { path, message: path.at(-1) === "variants" ? "must have at least one variant" : "must not be empty" };
    case "uniqueItems": // point at the second of the two equal items
      return { path: [...path, Math.max(Number(params.i), Number(params.j))], message: "lists the same value twice", subjectDepth: path.length };
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
function toJsonPath(value: unknown, pointer: string): JsonPath {
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

// ---------------------------------------------------------------------------------------------
// What the schema cannot say (well)

function semanticProblems(doc: EnvDocument, value: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  const flags: [JsonPath, unknown][] = Array.isArray(value.flags)
    ? value.flags.map((f, i) => [["flags", i], f])
    : isRecord(value.flags)
      ? Object.entries(value.flags).map(([k, f]) => [["flags", k], f])
      : [];
  for (const [path, flag] of flags) {
    if (!isRecord(flag) || !isRecord(flag.variants)) continue;
    problems.push(...checkVariants(doc, [...path, "variants"], flag.variants));
    const dv = flag.defaultVariant;
    if (typeof dv === "string" && !Object.prototype.hasOwnProperty.call(flag.variants, dv)) {
      const names = Object.keys(flag.variants).map((n) => `'${n}'`).join(", ");
      problems.push(
        docProblem(doc, [...path, "defaultVariant"], `defaultVariant '${dv}' is not one of the variants (${names})`),
      );
    }
  }
  if (Array.isArray(value.notifications)) {
    value.notifications.forEach((n, i) => {
      // Skipped while a `${NAME}` is left unexpanded: the unset variable is the problem reported.
      if (!isRecord(n) || typeof n.url !== "string" || n.url === "" || UNEXPANDED.test(n.url)) return;
      // The URL may hold a secret token (Slack's do): say what is wrong, never echo it.
      const path = ["notifications", i, "url"];
      if (!isHttpUrl(n.url)) problems.push(docProblem(doc, path, `${formatPath(path)}: must be an http or https URL`));
    });
  }
  return problems;
}

const UNEXPANDED = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;

const isHttpUrl = (text: string): boolean => {
  try {
    const { protocol } = new URL(text);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
};

type VariantType = "boolean" | "string" | "number" | "object";

const variantType = (v: unknown): VariantType | undefined => {
  if (typeof v === "boolean" || typeof v === "string" || typeof v === "number") return typeof v as VariantType;
  return isRecord(v) ? "object" : undefined;
};

/** flagd's typed flags: all variants boolean, all string, all number, or all object. */
function checkVariants(doc: EnvDocument, path: JsonPath, variants: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  let first: [string, VariantType] | undefined;
  for (const [name, value] of Object.entries(variants)) {
    const type = variantType(value);
    if (type === undefined) {
      const what = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
      problems.push(docProblem(doc, [...path, name], `variant '${name}' is ${what}: variants must be booleans, strings, numbers or objects`));
    } else if (!first) {
      first = [name, type];
    } else if (type !== first[1]) {
      problems.push(
        docProblem(
          doc,
          [...path, name],
          `variant '${name}' is ${typeList(type)} but variant '${first[0]}' is ${typeList(first[1])}: all variants of a flag must have the same type`,
        ),
      );
    }
  }
  return problems;
}

/** YAML's `.inf` and `.nan` are numbers JSON cannot carry: they would reach clients as null. */
function nonFiniteNumbers(doc: EnvDocument, value: unknown, path: JsonPath): Problem[] {
  if (typeof value === "number") {
    if (Number.isFinite(value)) return [];
    return [docProblem(doc, path, `${formatPath(path)}: must be a finite number (.inf and .nan have no JSON form)`)];
  }
  const children: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : isRecord(value)
      ? Object.entries(value)
      : [];
  return children.flatMap(([k, v]) => nonFiniteNumbers(doc, v, [...path, k]));
}

// ---------------------------------------------------------------------------------------------
// The engine's checks

export interface CompiledEnvironment {
  flags: Map<string, CompiledFlag>;
  problems: Problem[];
}

/** Compiles targeting; each engine error is located in the file that wrote the flag or segment. */
export function compileAndLocate(merged: MergedEnvironment): CompiledEnvironment {
  let result: ReturnType<typeof compileEnvironment>;
  try {
    result = compileEnvironment(merged.config);
  } catch (error) {
    // An engine bug must not take the other environments down with it.
    const first = merged.docs[0];
    const message = `cannot compile this environment: ${(error as Error).message}`;
    return { flags: new Map(), problems: [first ? docProblem(first, [], message) : { file: "", line: 0, col: 0, message }] };
  }
  const problems = result.errors.map((e) => {
    const [section, name, ...rest] = e.path;
    const origin: Origin | undefined =
      section === "flags"
        ? merged.origins.flags.get(String(name))
        : section === "segments"
          ? merged.origins.segments.get(String(name))
          : undefined;
    if (origin) return docProblem(origin.doc, [...origin.path, ...rest], e.message, rest.length === 0 ? "key" : "value");
    const first = merged.docs[0];
    return first ? docProblem(first, e.path, e.message) : { file: "", line: 0, col: 0, message: e.message };
  });
  return { flags: result.flags, problems };
}
