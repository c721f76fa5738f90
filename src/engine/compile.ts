import { flagMetadata, type EnvironmentConfig, type FlagDefinition, type JsonValue, type Metadata } from "../model/types.js";
import { canonicalJson, isRecord, setOwn } from "../model/json.js";
import { attachOutcomes } from "./outcomes.js";
import { direct, type BuildState } from "./codegen.js";
import { readsClock } from "./clock.js";
import { describeThrown, TargetingParseError } from "./errors.js";
import type { LogicEngine } from "json-logic-engine";
import { createLogicEngine, isOperator, logicEngine, operatorNames } from "./logic.js";
import { closestName } from "../log/names.js";
import { hasEvaluationState, STATE } from "./evaluation-state.js";
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
  /** Flags compiled by this call (the others were taken from `previous`). */
  compiledFlags: number;
  /** What the next compile of this environment can reuse (absent when a segment has a problem). */
  memo?: CompileMemo;
}

export interface CompileOptions {
  /** Segments already known to be unusable (their problem was reported elsewhere). */
  brokenSegments?: Iterable<string>;
  /** Rule coverage (`flagserve test --coverage`) only: the server never passes one. */
  instrument?: RuleInstrument;
  /** The last compile of the same environment: its unchanged flags and segments are reused. */
  previous?: CompileMemo;
}

/**
 * Rewrites each flag's targeting before it is built, to trace which branches an evaluation
 * takes. It sees the targeting with its `$ref`s resolved (each a call to the compiled segment),
 * so a path into it is a path into the targeting as written. Rules are then compiled per flag,
 * not shared, since the rewrite names the flag.
 */
export interface RuleInstrument {
  /** Adds the operators the rewritten rules call to the environment's engine. */
  install(engine: LogicEngine): void;
  rewrite(flagKey: string, resolved: unknown): unknown;
}

/**
 * One compile of an environment, kept for the next: its engine with the segments registered as
 * operators, and its flags (see compiledFrom).
 * A flag is reused when its definition is the same object (the loader shares unchanged
 * definitions between loads), the flag-set metadata is the same, and no segment it uses changed.
 */
export interface CompileMemo {
  readonly compiling: Compiling;
  readonly segments: Readonly<Record<string, JsonValue>>;
  readonly metadata: string;
  readonly broken: ReadonlySet<string>;
  /** Every flag of that compile: one is reused when `compiledFrom` has it made from the same definition. */
  readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** Segment operators registered in the engine that no longer stand for a segment. */
  readonly retired: number;
}

/**
 * The definition each flag compiled without problems was made from: how the next compile tells
 * it can reuse the flag (a flag with a problem is compiled again, so its problem is reported).
 */
const compiledFrom = new WeakMap<CompiledFlag, FlagDefinition>();

/** Retired segment operators an engine may hold before the next compile starts a fresh one. */
const MAX_RETIRED_SEGMENTS = 256;

/** The segment names a rule writes in `$ref` (memoized per rule object: definitions are shared between loads). */
const refsMemo = new WeakMap<object, readonly string[]>();
function refsOf(node: unknown): readonly string[] {
  if (typeof node !== "object" || node === null) return [];
  const known = refsMemo.get(node);
  if (known) return known;
  const found = new Set<string>();
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) for (const item of n) walk(item);
    else if (isRecord(n)) {
      if (typeof n.$ref === "string") found.add(n.$ref);
      for (const key of Object.keys(n)) walk(n[key]);
    }
  };
  walk(node);
  const refs = [...found];
  refsMemo.set(node, refs);
  return refs;
}

/**
 * The segments that must be resolved again: changed, added, removed or newly (un)broken since
 * `previous`, and those that use one of them. Undefined when nothing can be reused.
 */
function dirtySegments(
  config: EnvironmentConfig,
  metadata: string,
  broken: ReadonlySet<string>,
  previous: CompileMemo | undefined,
): Set<string> | undefined {
  if (!previous || previous.retired > MAX_RETIRED_SEGMENTS || previous.metadata !== metadata) return undefined;
  const dirty = new Set<string>();
  const names = new Set([...Object.keys(config.segments), ...Object.keys(previous.segments)]);
  for (const name of names) {
    const now = Object.hasOwn(config.segments, name) ? config.segments[name] : undefined;
    const was = Object.hasOwn(previous.segments, name) ? previous.segments[name] : undefined;
    if (now !== was || broken.has(name) !== previous.broken.has(name)) dirty.add(name);
  }
  // Those that use a dirty segment, to a fixpoint (segments form no cycle that compiles; a cycle is dirty anyway).
  for (let grew = dirty.size > 0; grew;) {
    grew = false;
    for (const name of Object.keys(config.segments)) {
      if (!dirty.has(name) && refsOf(config.segments[name]).some((ref) => dirty.has(ref))) {
        dirty.add(name);
        grew = true;
      }
    }
  }
  return dirty;
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
 * on the evaluation data is computed once (memo in the evaluation state, kept for the pass and
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
    segmentClock.set(
      operator,
      readsClock(resolved, (op) => segmentClock.get(op)),
    );
    const segment = (context: unknown): unknown => {
      if (!hasEvaluationState(context)) return rule(context as Record<string, unknown>);
      const state = context[STATE];
      const memos = (state.segments ??= []);
      const memo = memos[index];
      if (memo !== undefined && memo.serial === state.serial) return memo.value;
      const value = rule(context);
      if (memo === undefined) memos[index] = { serial: state.serial, value };
      else {
        memo.serial = state.serial;
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
export interface Compiling {
  resolver: Resolver;
  engine: LogicEngine;
  segmentClock: SegmentClock;
  /**
   * Each distinct rule (by its text as written, see rule-key.ts) compiled once: files repeat the
   * same targeting over many flags. Sharing is safe: a compiled rule is a pure function of the
   * evaluation data, which carries the flag's key (`$flagd.flagKey`) and its evaluation state, and
   * once the segments are resolved, resolving a rule depends on the rule alone. Only rules
   * without problems are kept, so each flag's problems are still reported at its own path.
   */
  rules: Map<string, CompiledTargeting>;
  instrument?: RuleInstrument;
}

const failingRule =
  (message: string): CompiledRule =>
  () => {
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
export function compileEnvironment(config: EnvironmentConfig, options: CompileOptions = {}): CompiledEnvironment {
  const brokenSegments = new Set(options.brokenSegments ?? []);
  // An instrumented compile (rule coverage) shares nothing with a server's compiles.
  const metadata = canonicalJson(config.metadata);
  const dirty = options.instrument ? undefined : dirtySegments(config, metadata, brokenSegments, options.previous);
  const previous = dirty ? options.previous : undefined;
  const compiling = previous ? reusedCompiling(previous.compiling, config, dirty!) : freshCompiling(config, options.instrument);
  const { resolver } = compiling;
  for (const name of brokenSegments) resolver.done.set(name, BROKEN);

  // Segments first, so that problems inside a segment are reported once, where they are written,
  // even when no flag uses the segment.
  for (const name of Object.keys(config.segments)) resolveSegment(resolver, name, []);

  const broken = new Map<string, string>();
  let compiledFlags = 0;
  const flags = new Map<string, CompiledFlag>();
  for (const key of Object.keys(config.flags)) {
    const def = config.flags[key]!;
    const kept = previous?.flags.get(key);
    if (kept && compiledFrom.get(kept) === def && (dirty!.size === 0 || !refsOf(def.targeting).some((ref) => dirty!.has(ref)))) {
      flags.set(key, kept);
      continue;
    }
    const { flag, problem } = compileFlag(key, def, config.metadata, compiling);
    flags.set(key, flag);
    if (problem !== undefined) broken.set(key, problem);
    else compiledFrom.set(flag, def);
    compiledFlags++;
  }
  const retired = (previous?.retired ?? 0) + (previous ? [...dirty!].filter((name) => Object.hasOwn(previous.segments, name)).length : 0);
  // Kept unless a segment has a problem (it would have to be reported again); a flag with a problem is in it, but not in compiledFrom.
  const memo: CompileMemo | undefined =
    !options.instrument && resolver.errors.every((e) => e.path[0] !== "segments")
      ? { compiling, segments: config.segments, metadata, broken: brokenSegments, flags, retired }
      : undefined;
  return { flags, errors: resolver.errors, broken, compiledFlags, ...(memo && { memo }) };
}

/** The environment's own engine: its segments become its operators (see segmentCompiler). */
function freshCompiling(config: EnvironmentConfig, instrument?: RuleInstrument): Compiling {
  const engine = createLogicEngine();
  const segmentClock: SegmentClock = new Map();
  const resolver: Resolver = {
    segments: config.segments,
    isOperator: (name) => isOperator(logicEngine, name),
    nearestOperator: (name) => closestName(name, operatorNames(logicEngine)),
    compileSegment: segmentCompiler(engine, segmentClock),
    errors: [],
    done: new Map(),
  };
  instrument?.install(engine);
  return { resolver, engine, segmentClock, rules: new Map(), ...(instrument && { instrument }) };
}

/**
 * The last compile's engine, with its segments that did not change still resolved. A dirty
 * segment is compiled again under a new operator (segmentCompiler numbers them on), so the
 * flags kept from the last compile still call the segment functions they were built with, and
 * the rules compiled by text are forgotten when a segment they might use changed.
 */
function reusedCompiling(last: Compiling, config: EnvironmentConfig, dirty: ReadonlySet<string>): Compiling {
  const done = new Map([...last.resolver.done].filter(([name]) => !dirty.has(name) && Object.hasOwn(config.segments, name)));
  const resolver: Resolver = { ...last.resolver, segments: config.segments, errors: [], done };
  return { ...last, resolver, rules: dirty.size === 0 ? last.rules : new Map() };
}

function compileFlag(
  key: string,
  def: FlagDefinition,
  setMetadata: Metadata,
  compiling: Compiling,
): { flag: CompiledFlag; problem?: string } {
  const flag: CompiledFlag = {
    key,
    state: def.state,
    variants: frozenCopy(def.variants) as Record<string, JsonValue>,
    defaultVariant: def.defaultVariant,
    metadata: flagMetadata(setMetadata, def.metadata),
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
  const text = compiling.instrument ? undefined : ruleKey(targeting);
  const known = text === undefined ? undefined : compiling.rules.get(text);
  if (known !== undefined) return known;
  const compiled = compileRule(key, targeting, compiling);
  if (text !== undefined && compiled.problem === undefined) compiling.rules.set(text, compiled);
  return compiled;
}

function compileRule(key: string, targeting: unknown, { resolver, engine, segmentClock, instrument }: Compiling): CompiledTargeting {
  const path = ["flags", key, "targeting"];
  const state: WalkState = { problems: [] };
  const resolved = resolveRule(resolver, targeting, path, [], state);
  if (state.problems.length > 0) return { problem: `invalid targeting: ${state.problems.join("; ")}` };
  if (isEmptyObject(resolved)) return { clockFree: true };
  try {
    const rule = build(engine, instrument ? instrument.rewrite(key, resolved) : resolved);
    return { rule, clockFree: !readsClock(resolved, (op) => segmentClock.get(op)) };
  } catch (err) {
    const message = `targeting cannot be compiled: ${describeThrown(err)}`;
    resolver.errors.push({ path, message });
    return { problem: message };
  }
}
