import { defaultMethods, LogicEngine } from "json-logic-engine";
import { direct, type BuildState, type Compiled } from "./codegen.js";
import { compileFractional, fractional } from "./fractional.js";
import { installOwnLookups } from "./lookup.js";
import { compileSemVer, semVer } from "./semver.js";
import { compileEndsWith, compileStartsWith, endsWith, startsWith } from "./strings.js";

/** json-logic-engine's own `in`, and its compile hook (which builds a written-out list anew on every call). */
const standardIn = defaultMethods.in as ((args: unknown) => boolean) & { compile: (args: unknown, build: BuildState) => Compiled | false };

const isPrimitive = (x: unknown): boolean => x === null || ["string", "number", "boolean"].includes(typeof x);

/**
 * `in` against a written-out list of literals (or a non-empty string): the list is kept by the
 * compiled rule, so only the item is evaluated. Same `includes` as json-logic-engine's.
 */
function compileIn(args: unknown, build: BuildState): Compiled | false {
  if (Array.isArray(args) && args.length === 2) {
    const list: unknown = args[1];
    if (Array.isArray(list) && list.every(isPrimitive)) {
      const items = [...list];
      return build.compile`${direct((item: unknown) => items.includes(item))}(${args[0]})`;
    }
    if (typeof list === "string" && list !== "") {
      return build.compile`${direct((item: unknown) => list.includes(item as string))}(${args[0]})`;
    }
  }
  return standardIn.compile(args, build);
}

/**
 * One engine, shared by every environment: standard JsonLogic plus flagd's operators. The
 * methods are stateless (per-evaluation state travels with the data, see evaluation-state.ts), so
 * sharing is safe. All are plain functions, which json-logic-engine calls with arguments
 * already evaluated: that is what lets variants and weights inside `fractional` be expressions.
 * Their compile hooks specialise the usual forms when a rule is built (constant operands
 * prepared once, no argument arrays per evaluation).
 */
export function createLogicEngine(): LogicEngine {
  const engine = new LogicEngine();
  installOwnLookups(engine);
  engine.addMethod("in", { method: standardIn, compile: compileIn } as never, { deterministic: true });
  // Not deterministic: depends on the context, must never be folded at compile time.
  engine.addMethod("fractional", { method: fractional, compile: compileFractional } as never);
  // Pure functions of their arguments: constant calls may be folded when the rule is built.
  engine.addMethod("sem_ver", { method: semVer, compile: compileSemVer } as never, { deterministic: true });
  engine.addMethod("starts_with", { method: startsWith, compile: compileStartsWith } as never, { deterministic: true });
  engine.addMethod("ends_with", { method: endsWith, compile: compileEndsWith } as never, { deterministic: true });
  return engine;
}

export const logicEngine = createLogicEngine();

/** The names of `engine`'s operators. */
export const operatorNames = (engine: LogicEngine): string[] => Object.keys(engine.methods as object);

/** Whether `name` is an operator of `engine` (own keys only: `toString` is not an operator). */
export const isOperator = (engine: LogicEngine, name: string): boolean => Object.hasOwn(engine.methods as object, name);
