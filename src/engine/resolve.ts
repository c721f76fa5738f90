import type { JsonPath, JsonValue } from "../model/types.js";
import { isRecord } from "../model/json.js";

/**
 * `$ref` resolution and operator checking on the parsed structure (never by text substitution,
 * which is what makes flagd sensitive to whitespace, key order and nesting). Every problem is
 * recorded with the JSON path of the offending node so the config loader can point at
 * file:line:col, and the walk goes on after a problem so that all of them are reported.
 */

export interface CompileError {
  /** From the environment document root, e.g. ["flags","new-ui","targeting","if",0,"$ref"]. */
  path: JsonPath;
  message: string;
}

/** A segment that cannot be used (its own error has already been reported where it lives). */
export const BROKEN: unique symbol = Symbol("broken segment");

export interface Resolver {
  segments: Readonly<Record<string, JsonValue>>;
  isOperator: (name: string) => boolean;
  /** The operator a mistyped name was probably meant to be, for the problem's message. */
  nearestOperator?: (name: string) => string | undefined;
  /**
   * Called once per segment after its refs resolved: compiles it and returns the rule node that
   * stands for it wherever it is referenced, or an error message. Without it, a reference is the
   * resolved segment itself (shared, not copied).
   */
  compileSegment?: (name: string, resolved: unknown) => { reference: unknown } | { error: string };
  errors: CompileError[];
  /** Memo: each segment is resolved (and its errors reported) once. */
  done: Map<string, unknown>;
}

/** Problems found while resolving one rule, as one-line reasons (for a PARSE_ERROR at evaluation). */
export interface WalkState {
  problems: string[];
}

export const isEmptyObject = (x: unknown): boolean => isRecord(x) && Object.keys(x).length === 0;

const quoted = (keys: string[]): string => keys.map((k) => JSON.stringify(k)).join(", ");

function fail(r: Resolver, state: WalkState, path: JsonPath, message: string): null {
  r.errors.push({ path, message });
  state.problems.push(message);
  return null;
}

/**
 * What stands for segment `name` in a rule (see compileSegment), or BROKEN. `stack` holds the
 * segments being resolved. Each segment is resolved once, however often it is referenced.
 */
export function resolveSegment(r: Resolver, name: string, stack: string[]): unknown {
  if (r.done.has(name)) return r.done.get(name);
  const state: WalkState = { problems: [] };
  stack.push(name);
  let resolved = resolveRule(r, r.segments[name], ["segments", name], stack, state);
  stack.pop();
  if (state.problems.length > 0) resolved = BROKEN;
  else if (r.compileSegment) {
    const compiled = r.compileSegment(name, resolved);
    if ("error" in compiled) {
      r.errors.push({ path: ["segments", name], message: compiled.error });
      resolved = BROKEN;
    } else resolved = compiled.reference;
  }
  r.done.set(name, resolved);
  return resolved;
}

/**
 * A copy of `node` with every `{ "$ref": name }` replaced by what stands for the segment: a call
 * to the segment compiled once, so a segment referenced twice by each of 40 nested segments
 * costs 40 compilations, not 2^40 copies.
 */
export function resolveRule(r: Resolver, node: unknown, path: JsonPath, stack: string[], state: WalkState): unknown {
  if (Array.isArray(node)) return node.map((item, i) => resolveRule(r, item, [...path, i], stack, state));
  if (!isRecord(node)) return node;
  const keys = Object.keys(node);
  if (keys.length === 0) return {};

  if (Object.hasOwn(node, "$ref")) {
    // flagd matches the exact text {"$ref":"name"}: an object with other keys is not a ref.
    if (keys.length !== 1) return fail(r, state, path, `a $ref object must have no other keys (found ${quoted(keys)})`);
    const name = node["$ref"];
    const refPath = [...path, "$ref"];
    if (typeof name !== "string") return fail(r, state, refPath, "$ref must be a segment name (a string)");
    if (!Object.hasOwn(r.segments, name)) {
      const known = Object.keys(r.segments);
      const hint =
        known.length === 0 ? "no segments are defined" : `defined: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", ..." : ""}`;
      return fail(r, state, refPath, `unknown segment "${name}" in $ref (${hint})`);
    }
    const at = stack.indexOf(name);
    if (at >= 0) return fail(r, state, refPath, `segment reference cycle: ${[...stack.slice(at), name].join(" -> ")}`);
    const segment = resolveSegment(r, name, stack);
    if (segment === BROKEN) {
      state.problems.push(`segment "${name}" is invalid`);
      return null;
    }
    return segment;
  }

  if (keys.length > 1) return fail(r, state, path, `an operation must have exactly one key, found ${quoted(keys)}`);
  const op = keys[0] as string;
  const args = node[op];
  if (!r.isOperator(op)) {
    const near = r.nearestOperator?.(op);
    fail(r, state, [...path, op], `unknown operator "${op}"${near ? ` (did you mean "${near}"?)` : ""}`);
    resolveRule(r, args, [...path, op], stack, state); // keep looking for further problems
    return null;
  }
  // `preserve` takes literal data, not JsonLogic: nothing inside it is an operator or a ref.
  if (op === "preserve") return { preserve: args };
  return { [op]: resolveRule(r, args, [...path, op], stack, state) };
}
