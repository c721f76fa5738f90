import { LogicEngine } from "json-logic-engine";
import { compileFractional, fractional } from "./fractional.js";
import { installOwnLookups } from "./lookup.js";
import { semVer } from "./semver.js";
import { endsWith, startsWith } from "./strings.js";

/**
 * One engine, shared by every environment: standard JsonLogic plus flagd's operators. The
 * methods are stateless (per-evaluation state travels with the data, see scratch.ts), so
 * sharing is safe. All are plain functions, which json-logic-engine calls with arguments
 * already evaluated: that is what lets variants and weights inside `fractional` be expressions.
 */
export function createLogicEngine(): LogicEngine {
  const engine = new LogicEngine();
  installOwnLookups(engine);
  // Not deterministic: depends on the context, must never be folded at compile time.
  engine.addMethod("fractional", { method: fractional, compile: compileFractional } as never);
  // Pure functions of their arguments: constant calls may be folded when the rule is built.
  engine.addMethod("sem_ver", semVer, { deterministic: true });
  engine.addMethod("starts_with", startsWith, { deterministic: true });
  engine.addMethod("ends_with", endsWith, { deterministic: true });
  return engine;
}

export const logicEngine = createLogicEngine();

/** Whether `name` is an operator of `engine` (own keys only: `toString` is not an operator). */
export const isOperator = (engine: LogicEngine, name: string): boolean =>
  Object.hasOwn(engine.methods as object, name);
