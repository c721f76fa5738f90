import type { EnvironmentConfig, FlagDefinition, JsonValue, Metadata } from "../model/types.js";
import { setOwn } from "../model/json.js";
import { runSteps, type Steps } from "../model/steps.js";
import { attachOutcomes } from "./outcomes.js";
import { direct, type BuildState } from "./codegen.js";
import { readsClock } from "./clock.js";
import { describeThrown, TargetingParseError } from "./errors.js";
import type { LogicEngine } from "json-logic-engine";
import { createLogicEngine, isOperator, logicEngine } from "./logic.js";
import { hasScratch, SCRATCH } from "./scratch.js";
import { BROKEN, isEmptyObject, resolveRule, resolveSegment, type CompileError, type Resolver, type WalkState } from "./resolve.js";
import { ruleKey } from "./rule-key.js";
import type { CompiledFlag, CompiledRule } from "./types.js";

export type { CompileError } from "./resolve.js";
export type { JsonPath } from "../model/types.js";

export interface CompiledEnvironment {
  /** Every flag of the environment, in file order. Flags whose targeting failed to compile are
   * present with a rule that fails with PARSE_ERROR (see `broken`). */
  flags: Map<string, CompiledFlag>;
  /** All problems found; empty means the environment is valid. */
  errors: CompileError[];
  /** Flags that cannot be served as written (their targeting, or a segment it uses, has a
   * problem), with the reason their evaluation gives. */
  broken: Map<string, string>;
}

export interface CompileOptions {
  /** Segments already known to be unusable (their problem was reported elsewhere). */
  brokenSegments?: Iterable<string>;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * A frozen deep copy: structuredClone then deepFreeze in one pass for plain data (what files
 * hold), a few times cheaper per flag; anything else is cloned by structuredClone.
 */
function frozenCopy(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return deepFreeze(structuredClone(value));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, frozenCopy((value as Record<string, unknown>)[key]));
  return Object.freeze(copy);
}

/** json-logic-engine compiles to a JS function once; evaluation never re-parses the rule. */
function build(engine: LogicEngine, logic: unknown): CompiledRule {
  return engine.build(logic) as CompiledRule;
}

/**
 * Each segment is compiled once into its own function and registered as an operator of the
 * environment's engine (under a name no file can write: operators are checked against the
 * shared engine). A rule calls it where it wrote `$ref`. Within one evaluation a segment called
 * on the evaluation data is computed once (memo in the scratch record, kept for the pass and
 * valid for the evaluation whose serial it holds), so evaluation stays linear too; inside an
 * iterator it runs on the current item, as inlined text would.
 */
function segmentCompiler(engine: LogicEngine, segmentClock: SegmentClock): NonNullable<Resolver["compileSegment"]> {
  let count = 0;
  return (_name, resolved) => {
    if (isEmptyObject(resolved)) return { reference: {} }; // no rule: `targeting: { $ref: empty }` is no targeting
    let rule: CompiledRule;
    try {
      rule = build(engine, resolved);
    } catch (err) {
      return { error: `segment cannot be compiled: ${describeThrown(err)}` };
    }
    const index = count++;
    const operator = `$segment#${index}`;
    // Segments used by this one were compiled first, so their entries are there already.
    segmentClock.set(operator, readsClock(resolved, (op) => segmentClock.get(op)));
    const segment = (context: unknown): unknown => {
      if (!hasScratch(context)) return rule(context as Record<string, unknown>);
      const scratch = context[SCRATCH];
      const memos = (scratch.segments ??= []);
      const memo = memos[index];
      if (memo !== undefined && memo.serial === scratch.serial) return memo.value;
      const value = rule(context);
      if (memo === undefined) memos[index] = { serial: scratch.serial, value };
      else {
        memo.serial = scratch.serial;
        memo.value = value;
      }
      return value;
    };
    // Called directly by the rules that use it (no argument array built per call).
    const compile = (_args: unknown, build: BuildState) => build.compile`${direct(segment)}(context)`;
    engine.addMethod(operator, { method: (_args: unknown, context: unknown) => segment(context), compile } as never);
    return { reference: { [operator]: [] } };
  };
}

/** Whether each segment operator's rule can read the clock (see clock.ts). */
type SegmentClock = Map<string, boolean>;

/** A flag's targeting once compiled: no rule when there is none, a problem when it cannot be used. */
interface CompiledTargeting {
  rule?: CompiledRule;
  problem?: string;
  clockFree?: boolean;
}

/** What compiling one environment's flags works with. */
interface Compiling {
  resolver: Resolver;
  engine: LogicEngine;
  segmentClock: SegmentClock;
  /**
   * Each distinct rule (by its text as written, see rule-key.ts) compiled once: files repeat the
   * same targeting over many flags. Sharing is safe: a compiled rule is a pure function of the
   * evaluation data, which carries the flag's key (`$flagd.flagKey`) and its scratch record, and
   * once the segments are resolved, resolving a rule depends on the rule alone. Only rules
   * without problems are kept, so each flag's problems are still reported at its own path.
   */
  rules: Map<string, CompiledTargeting>;
}

const failingRule = (message: string): CompiledRule => () => {
  throw new TargetingParseError(message);
};

/**
 * A flag that cannot be evaluated as written: every evaluation fails with PARSE_ERROR (as flagd
 * answers a flag whose targeting it cannot parse). Carries the flag-set metadata only.
 */
export const unusableFlag = (key: string, reason: string, setMetadata: Metadata): CompiledFlag =>
  Object.freeze({
    key,
    state: "ENABLED",
    variants: Object.freeze({}),
    defaultVariant: null,
    metadata: Object.freeze({ ...setMetadata }),
    rule: failingRule(reason),
    clockFree: true,
  });

/**
 * Resolve `$ref`s, check operators and compile targeting for one environment. Pure: the config is
 * not modified, the result shares nothing mutable with it, and every error is collected.
 */
export const compileEnvironment = (config: EnvironmentConfig, options: CompileOptions = {}): CompiledEnvironment =>
  runSteps(compileEnvironmentSteps(config, options));

/** Flags compiled between two yields of compileEnvironmentSteps. */
const FLAGS_PER_STEP = 2000;

/** compileEnvironment in steps: yields every FLAGS_PER_STEP flags (see runStepsYielding). */
export function* compileEnvironmentSteps(config: EnvironmentConfig, options: CompileOptions = {}): Steps<CompiledEnvironment> {
  // The environment's own engine: its segments become its operators (see segmentCompiler).
  const engine = createLogicEngine();
  const segmentClock: SegmentClock = new Map();
  const resolver: Resolver = {
    segments: config.segments,
    isOperator: (name) => isOperator(logicEngine, name),
    compileSegment: segmentCompiler(engine, segmentClock),
    errors: [],
    done: new Map(),
  };
  for (const name of options.brokenSegments ?? []) resolver.done.set(name, BROKEN);

  // Segments first, so that problems inside a segment are reported once, where they are written,
  // even when no flag uses the segment.
  for (const name of Object.keys(config.segments)) resolveSegment(resolver, name, []);

  const compiling: Compiling = { resolver, engine, segmentClock, rules: new Map() };
  const flags = new Map<string, CompiledFlag>();
  const broken = new Map<string, string>();
  let count = 0;
  for (const [key, def] of Object.entries(config.flags)) {
    const { flag, problem } = compileFlag(key, def, config.metadata, compiling);
    flags.set(key, flag);
    if (problem !== undefined) broken.set(key, problem);
    if (++count % FLAGS_PER_STEP === 0) yield;
  }
  return { flags, errors: resolver.errors, broken };
}

function compileFlag(key: string, def: FlagDefinition, setMetadata: Metadata, compiling: Compiling): { flag: CompiledFlag; problem?: string } {
  const flag: CompiledFlag = {
    key,
    state: def.state,
    variants: frozenCopy(def.variants) as Record<string, JsonValue>,
    defaultVariant: def.defaultVariant,
    // flagd's patchMetadata: the flag's own keys win over the flag set's.
    metadata: Object.freeze({ ...setMetadata, ...def.metadata }),
  };
  const { rule, problem, clockFree } = compileTargeting(key, def.targeting, compiling);
  if (problem !== undefined) return { flag: unusableFlag(key, problem, flag.metadata), problem };
  if (rule) flag.rule = rule;
  if (clockFree) flag.clockFree = true;
  attachOutcomes(flag);
  return { flag: Object.freeze(flag) };
}

/**
 * No rule when there is none (absent or `{}`, also after resolution); a problem when it cannot
 * be used; `clockFree` when the rule cannot read `$flagd.timestamp`, nor any segment it uses.
 */
function compileTargeting(key: string, targeting: unknown, compiling: Compiling): CompiledTargeting {
  if (targeting === undefined || isEmptyObject(targeting)) return { clockFree: true };
  const text = ruleKey(targeting);
  const known = text === undefined ? undefined : compiling.rules.get(text);
  if (known !== undefined) return known;
  const compiled = compileRule(key, targeting, compiling);
  if (text !== undefined && compiled.problem === undefined) compiling.rules.set(text, compiled);
  return compiled;
}

function compileRule(key: string, targeting: unknown, { resolver, engine, segmentClock }: Compiling): CompiledTargeting {
  const path = ["flags", key, "targeting"];
  const state: WalkState = { problems: [] };
  const resolved = resolveRule(resolver, targeting, path, [], state);
  if (state.problems.length > 0) return { problem: `invalid targeting: ${state.problems.join("; ")}` };
  if (isEmptyObject(resolved)) return { clockFree: true };
  try {
    return { rule: build(engine, resolved), clockFree: !readsClock(resolved, (op) => segmentClock.get(op)) };
  } catch (err) {
    const message = `targeting cannot be compiled: ${describeThrown(err)}`;
    resolver.errors.push({ path, message });
    return { problem: message };
  }
}
