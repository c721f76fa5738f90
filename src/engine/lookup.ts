/**
 * Context is plain data: the operators that read it (`var`, `val`, `get`, `exists`, `missing`,
 * `missing_some`) see own properties only. json-logic-engine's versions index with `obj[key]`,
 * so `{"var": "constructor.name"}` answered "Object" and anything on a prototype was readable.
 * Null-prototype objects are not an option: the engine itself reads `value.constructor.name`.
 */
import { splitPathMemoized, type LogicEngine } from "json-logic-engine";
import { direct, type BuildState, type Compiled } from "./codegen.js";

/** `node[key]` when `node` is an object or array that owns `key`; otherwise undefined. */
export const ownValue = (node: unknown, key: string | number): unknown =>
  node !== null && typeof node === "object" && Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;

/** Walks `pieces` through own properties; `notFound` when any step is missing. */
export function ownPath(node: unknown, pieces: readonly (string | number)[], notFound: unknown): unknown {
  let current = node;
  for (const piece of pieces) {
    current = ownValue(current, piece);
    if (current === undefined) return notFound;
  }
  return current;
}

type Scope = { context: unknown; above: unknown[] };

/** `../` climbs one scope out of an iterator (`map`, `filter`, ...), as json-logic-engine does. */
function climb(key: string, context: unknown, above: unknown[]): Scope & { key: string } {
  let iter = 0;
  while (key.startsWith("../") && iter < above.length) {
    context = above[iter++];
    key = key.substring(3);
    if (iter === above.length && Array.isArray(context)) {
      iter = 0;
      above = context;
      context = above[iter++];
    }
  }
  return { key, context, above };
}

function varMethod(args: unknown, context: unknown, above: unknown[] = []): unknown {
  let key = args;
  let fallback: unknown;
  if (Array.isArray(args)) [key, fallback] = args as unknown[];
  const notFound = fallback === undefined ? null : fallback;
  if (key === undefined || key === null || key === "") return context;
  const scope = climb(String(key), context, above);
  if (scope.key === "") return scope.context;
  return ownPath(scope.context, splitPathMemoized(scope.key), notFound);
}

/** `{"val": [[-n], "a", "b"]}`: optional scope climb, then a path of keys. */
function valPath(args: unknown, context: unknown, above: unknown[] = []): { found: boolean; value: unknown } {
  const list = Array.isArray(args) ? (args.length === 1 && !Array.isArray(args[0]) ? [args[0]] : args) : [args];
  let current: unknown = context;
  let start = 0;
  if (Array.isArray(list[0]) && list[0].length === 1) {
    start = 1;
    let scopes = above;
    let pos = 0;
    const steps = Math.abs(Number(list[0][0]));
    for (let i = 0; i < steps; i++) {
      current = scopes[pos++];
      if (i === scopes.length - 1 && Array.isArray(current)) {
        scopes = current;
        current = current[0];
        pos = 1;
      }
    }
  }
  for (let i = start; i < list.length; i++) {
    if (list[i] === null) continue;
    current = ownValue(current, list[i] as string);
    if (current === undefined) return { found: false, value: null };
  }
  return { found: true, value: current };
}

function missingMethod(checked: unknown, context: unknown): unknown[] {
  const keys = Array.isArray(checked) ? checked : [checked];
  return keys.filter((k) => ownPath(context, splitPathMemoized(String(k)), undefined) === undefined);
}

function missingSomeMethod(args: unknown, context: unknown): unknown[] {
  const [needCount, options] = Array.isArray(args) ? args : [];
  const list = Array.isArray(options) ? options : [];
  const missing = missingMethod(list, context);
  return list.length - missing.length >= Number(needCount) ? [] : missing;
}

function getMethod(args: unknown): unknown {
  const [data, key, fallback] = Array.isArray(args) ? args : [];
  return ownPath(data, splitPathMemoized(String(key)), fallback === undefined ? null : fallback);
}

/** A reader of one own property, for a `var` with a one-piece path. */
const ownKeyReader =
  (key: string | number, notFound: unknown) =>
  (node: unknown): unknown => {
    const value = ownValue(node, key);
    return value === undefined ? notFound : value;
  };

/**
 * Whether every JSON value that has `key` has it as its own property: no object or array
 * inherits it (`constructor`, `toString`, `length` are inherited). JSON values are plain objects,
 * arrays and primitives, and `var` reads no primitive.
 */
const neverInherited = (key: string): boolean => !(key in Object.prototype) && !(key in Array.prototype);

/**
 * Compiled `var` for the common case (a fixed key, no scope climb, a literal default): a direct
 * call of a reader made when the rule is built, the path split once. A one-piece key that no
 * JSON value inherits is read in the rule's own code, as a property of a known name: each rule
 * then keeps its own record of the data's shape, where a reader shared by every rule looked
 * keys up by hashing. Anything else runs the method.
 */
function compileVar(data: unknown, build: BuildState): Compiled | false {
  let key = data;
  let fallback: unknown = null;
  if (Array.isArray(data)) {
    if (data.length > 2) return false;
    [key, fallback = null] = data as unknown[];
  }
  if (fallback !== null && typeof fallback === "object") return false;
  if (key === undefined || key === null || key === "") return "context";
  if (typeof key !== "string" && typeof key !== "number") return false;
  const text = String(key);
  if (text.includes("../")) return false;
  const pieces: (string | number)[] = [...splitPathMemoized(text)];
  if (pieces.length === 1 && neverInherited(String(pieces[0]))) {
    const name = JSON.stringify(String(pieces[0]));
    const otherwise = Object.is(fallback, -0) ? "-0" : JSON.stringify(fallback); // JSON writes -0 as 0
    return `(context !== null && typeof context === "object" && context[${name}] !== undefined ? context[${name}] : ${otherwise})`;
  }
  const read = pieces.length === 1 ? ownKeyReader(pieces[0]!, fallback) : (node: unknown) => ownPath(node, pieces, fallback);
  return build.compile`${direct(read)}(context)`;
}

/** Replaces the engine's context-reading operators with own-property versions. */
export function installOwnLookups(engine: LogicEngine): void {
  const deterministic = false;
  engine.addMethod("var", { method: varMethod, compile: compileVar, optimizeUnary: true } as never, { deterministic });
  engine.addMethod("val", { method: (args: unknown, ctx: unknown, above: unknown[]) => valPath(args, ctx, above).value } as never, {
    deterministic,
  });
  engine.addMethod("exists", { method: (args: unknown, ctx: unknown, above: unknown[]) => valPath(args, ctx, above).found } as never, {
    deterministic,
  });
  engine.addMethod("get", getMethod, { deterministic: true });
  engine.addMethod("missing", missingMethod, { deterministic });
  engine.addMethod("missing_some", missingSomeMethod, { deterministic });
}
