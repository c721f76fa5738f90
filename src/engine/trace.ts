/**
 * Which branches of its targeting an evaluation takes. The environment is compiled again with a
 * RuleInstrument (compile.ts) that wraps every `if` branch and every `fractional` in a tracing
 * operator, which reports the branch it passes through. Rule coverage (`flagserve test
 * --coverage`) and the dashboard's playground (which rule matched) build one; the server's own
 * compiles and evaluations never do, and `evaluate` stays a pure function of (flag, context).
 */
import type { LogicEngine } from "json-logic-engine";
import { isRecord } from "../model/json.js";
import type { EnvironmentConfig, JsonPath } from "../model/types.js";
import { compileEnvironment, type RuleInstrument } from "./compile.js";
import { evaluate } from "./evaluate.js";
import type { CompiledFlag, Evaluation } from "./types.js";

/**
 * What a branch is: an `if` branch (`index`: 1 for the first), its `else` (written, or the one an
 * `if` without an `else` has, which answers null), or a variant a `fractional` can pick.
 */
export type BranchKind = "if" | "else" | "no-else" | "bucket";

export interface TracedBranch {
  flag: string;
  kind: BranchKind;
  /** In words: `if branch 1 ("on")`, `else (an expression)`, `fractional bucket "green" (weight 10)`. */
  label: string;
  /** Where it is written, inside the flag's definition (e.g. `["targeting", "if", 1]`); an unwritten else: the `if`'s. */
  path: JsonPath;
}

/** The environment's flags compiled with tracing: each branch an evaluation passes through is reported to `taken`. */
export class RuleTracer {
  readonly branches: TracedBranch[] = [];
  readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** Per traced `fractional`: variant -> its branch. */
  readonly #fractionals = new Map<number, Map<unknown, number>>();

  constructor(config: EnvironmentConfig, taken: (branch: number) => void) {
    const instrument: RuleInstrument = {
      install: (engine: LogicEngine) => {
        engine.addMethod("$trace_branch", ((args: [number, unknown]) => {
          taken(args[0]);
          return args[1];
        }) as never);
        engine.addMethod("$trace_fractional", ((args: [number, unknown]) => {
          const [id, result] = args;
          const branch = this.#fractionals.get(id)?.get(result);
          if (branch !== undefined) taken(branch);
          return result;
        }) as never);
      },
      // A disabled flag never runs its targeting.
      rewrite: (flag, resolved) => (config.flags[flag]?.state === "DISABLED" ? resolved : this.#rewrite(flag, resolved, ["targeting"])),
    };
    this.flags = compileEnvironment(config, { instrument }).flags;
  }

  #add(flag: string, kind: BranchKind, label: string, path: JsonPath): number {
    this.branches.push({ flag, kind, label, path });
    return this.branches.length - 1;
  }

  /** A copy of `node` with each `if` branch and each `fractional` traced. `path` as written (from the flag). */
  #rewrite(flag: string, node: unknown, path: JsonPath): unknown {
    if (Array.isArray(node)) return node.map((item, i) => this.#rewrite(flag, item, [...path, i]));
    if (!isRecord(node)) return node;
    const keys = Object.keys(node);
    if (keys.length !== 1) return node;
    const op = keys[0]!;
    const args = node[op];
    if (op === "preserve" || op.startsWith("$segment#")) return node;
    const inner = [...path, op];
    if ((op === "if" || op === "?:") && Array.isArray(args) && args.length >= 2) {
      const traced = args.map((arg, i) => {
        const rewritten = this.#rewrite(flag, arg, [...inner, i]);
        const isElse = i === args.length - 1 && args.length % 2 === 1;
        if (i % 2 === 0 && !isElse) return rewritten; // a condition
        const id = isElse
          ? this.#add(flag, "else", `else (${describe(arg)})`, [...inner, i])
          : this.#add(flag, "if", `if branch ${(i + 1) / 2} (${describe(arg)})`, [...inner, i]);
        return { $trace_branch: [id, rewritten] };
      });
      // No else written: it answers null (the default). Traced as its own branch, at the `if`.
      if (args.length % 2 === 0) traced.push({ $trace_branch: [this.#add(flag, "no-else", "else (none written: null)", path), null] });
      return { [op]: traced };
    }
    if (op === "fractional" && Array.isArray(args) && args.length > 0) {
      const entries = Array.isArray(args[0]) ? args.map((a, i) => [a, i] as const) : args.slice(1).map((a, i) => [a, i + 1] as const);
      // One branch per variant: entries naming the same variant cannot be told apart by the
      // answer, and a bucket of weight 0 (or below) is never picked.
      const buckets = new Map<unknown, { at: number; weights: unknown[] }>();
      for (const [entry, i] of entries) {
        const variant: unknown = Array.isArray(entry) ? (entry[0] ?? null) : undefined;
        const weight: unknown = Array.isArray(entry) && entry.length >= 2 ? (entry[1] ?? 1) : 1;
        if (typeof weight === "number" && weight <= 0) continue;
        const bucket = buckets.get(variant);
        if (bucket) bucket.weights.push(weight);
        else buckets.set(variant, { at: i, weights: [weight] });
      }
      const branches = new Map<unknown, number>();
      for (const [variant, { at, weights }] of buckets) {
        const shown = weights.every((w) => typeof w === "number") ? ` (weight${weights.length > 1 ? "s" : ""} ${weights.join(", ")})` : "";
        branches.set(variant, this.#add(flag, "bucket", `fractional bucket ${describe(variant)}${shown}`, [...inner, at]));
      }
      const id = this.#fractionals.size;
      this.#fractionals.set(id, branches);
      return { $trace_fractional: [id, { fractional: this.#rewrite(flag, args, inner) }] };
    }
    return { [op]: this.#rewrite(flag, args, inner) };
  }
}

const describe = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value !== "object") return String(value);
  return JSON.stringify(value).length <= 30 ? JSON.stringify(value) : "an expression";
};

/** One evaluation and the branches it took, the outermost first. */
export interface ExplainedEvaluation {
  evaluation: Evaluation;
  branches: TracedBranch[];
}

/**
 * Evaluates flags of `config` as `evaluate` does, saying which branches each evaluation took.
 * Compiles the environment once, with tracing (for a person's question, not for serving).
 */
export function explainer(
  config: EnvironmentConfig,
): (key: string, context: Record<string, unknown>, nowMs?: number) => ExplainedEvaluation | undefined {
  let trail: number[] = [];
  const tracer = new RuleTracer(config, (branch) => trail.push(branch));
  return (key, context, nowMs = Date.now()) => {
    const flag = tracer.flags.get(key);
    if (!flag) return undefined;
    trail = [];
    const evaluation = evaluate(flag, context, nowMs);
    // A tracing operator reports once what it wraps has been evaluated, so inner branches come
    // first: reversed, the trail reads from the outermost branch in.
    return { evaluation, branches: trail.reverse().map((id) => tracer.branches[id]!) };
  };
}
