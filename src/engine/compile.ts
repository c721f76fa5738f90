import type { EnvironmentConfig, FlagDefinition, JsonValue, Metadata } from "../config/types.js";
import { describeThrown, TargetingParseError } from "./errors.js";
import { isOperator, logicEngine } from "./logic.js";
import { isEmptyObject, resolveRule, resolveSegment, type CompileError, type Resolver, type WalkState } from "./resolve.js";
import type { CompiledFlag, CompiledRule } from "./types.js";

export type { CompileError, JsonPath } from "./resolve.js";

export interface CompiledEnvironment {
  /** Every flag of the environment, in file order. Flags whose targeting failed to compile are
   * present with a rule that fails with PARSE_ERROR (served only with --allow-invalid). */
  flags: Map<string, CompiledFlag>;
  /** All problems found; empty means the environment is valid. */
  errors: CompileError[];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** json-logic-engine compiles to a JS function once; evaluation never re-parses the rule. */
function build(logic: unknown): CompiledRule {
  return logicEngine.build(logic) as CompiledRule;
}

const failingRule = (message: string): CompiledRule => () => {
  throw new TargetingParseError(message);
};

/**
 * Resolve `$ref`s, check operators and compile targeting for one environment. Pure: the config is
 * not modified, the result shares nothing mutable with it, and every error is collected.
 */
export function compileEnvironment(config: EnvironmentConfig): CompiledEnvironment {
  const resolver: Resolver = {
    segments: config.segments,
    isOperator: (name) => isOperator(logicEngine, name),
    checkSegment: (resolved) => {
      try {
        build(resolved);
        return undefined;
      } catch (err) {
        return `segment cannot be compiled: ${describeThrown(err)}`;
      }
    },
    errors: [],
    done: new Map(),
  };

  // Segments first, so that problems inside a segment are reported once, where they are written,
  // even when no flag uses the segment.
  for (const name of Object.keys(config.segments)) resolveSegment(resolver, name, []);

  const flags = new Map<string, CompiledFlag>();
  for (const [key, def] of Object.entries(config.flags)) {
    flags.set(key, compileFlag(key, def, config.metadata, resolver));
  }
  return { flags, errors: resolver.errors };
}

function compileFlag(key: string, def: FlagDefinition, setMetadata: Metadata, resolver: Resolver): CompiledFlag {
  const flag: CompiledFlag = {
    key,
    state: def.state,
    variants: deepFreeze(structuredClone(def.variants)) as Record<string, JsonValue>,
    defaultVariant: def.defaultVariant,
    // flagd's patchMetadata: the flag's own keys win over the flag set's.
    metadata: Object.freeze({ ...setMetadata, ...def.metadata }),
  };
  const rule = compileTargeting(key, def.targeting, resolver);
  if (rule) flag.rule = rule;
  return Object.freeze(flag);
}

/** undefined when there is no rule (absent or `{}`, also after resolution). */
function compileTargeting(key: string, targeting: unknown, resolver: Resolver): CompiledRule | undefined {
  if (targeting === undefined || isEmptyObject(targeting)) return undefined;
  const path = ["flags", key, "targeting"];
  const state: WalkState = { problems: [] };
  const resolved = resolveRule(resolver, targeting, path, [], state);
  if (state.problems.length > 0) return failingRule(`invalid targeting: ${state.problems.join("; ")}`);
  if (isEmptyObject(resolved)) return undefined;
  try {
    return build(resolved);
  } catch (err) {
    const message = `targeting cannot be compiled: ${describeThrown(err)}`;
    resolver.errors.push({ path, message });
    return failingRule(message);
  }
}
