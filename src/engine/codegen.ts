/**
 * What an operator's `compile` hook works with (json-logic-engine 5): it receives the operator's
 * arguments unevaluated and returns JavaScript source for the compiled rule, or false to leave
 * the operator to the engine's generic call (arguments evaluated into a fresh array each time).
 */
import { Constants } from "json-logic-engine";

/** Source text as json-logic-engine's build takes it back from a hook. */
export type Compiled = { [key: symbol]: string } | string;

export interface BuildState {
  /**
   * Template tag: a function item becomes a call target of the compiled rule (`methods[i]`); any
   * other item is compiled as JsonLogic (its value at evaluation time).
   */
  compile: (strings: TemplateStringsArray, ...items: unknown[]) => Compiled;
}

/** Marks `fn` as synchronous: json-logic-engine inlines such functions as direct calls. */
export const direct = <F extends (...args: never[]) => unknown>(fn: F): F => Object.assign(fn, { [Constants.Sync]: true });

/**
 * Whether a rule argument is its own value: a literal, or an array of them (built as an array
 * literal by the engine). Objects are operators, which the engine evaluates.
 */
export const isConstant = (x: unknown): boolean =>
  x === null || ["string", "number", "boolean"].includes(typeof x) || (Array.isArray(x) && x.every(isConstant));
