/**
 * Rule coverage in the engine's terms: which branches of each flag's targeting evaluations
 * reached. The environment is compiled again with a RuleInstrument (engine/compile.ts) that wraps
 * every `if` branch and every `fractional` in a tracing operator; the answer's reason says when
 * the default was reached. Only `flagserve test --coverage` builds this; the server never does.
 *
 * Only branches some context can reach are counted (docs/testing-flags.md, "Rule coverage"): the
 * default is left out when the targeting answers a variant on every path (alwaysAnswers), and a
 * `fractional` counts one branch per variant that has buckets (weight above 0). Conditions are
 * not judged: whether a context meets one is what the cases are for.
 */
import { readFile } from "node:fs/promises";
import type { LogicEngine } from "json-logic-engine";
import { parseYaml } from "../config/parse.js";
import type { Source } from "../config/positions.js";
import { compileEnvironment, type RuleInstrument } from "../engine/compile.js";
import { parseDistribution } from "../engine/fractional.js";
import type { CompiledFlag, Evaluation } from "../engine/types.js";
import { isEvaluationError } from "../engine/types.js";
import { isRecord } from "../model/json.js";
import type { EnvironmentConfig, JsonPath } from "../model/types.js";

export interface Branch {
  flag: string;
  /** What the branch is, in words: `if branch 1 ("on")`, `else`, `fractional bucket "green"`, `default`. */
  label: string;
  /** Where it is written, inside the flag's definition (e.g. `["targeting", "if", 1]`). */
  path: JsonPath;
  file?: string;
  line?: number;
}

export interface FlagCoverage {
  flag: string;
  branches: number;
  reached: number;
  /** The branches no evaluation reached. */
  missed: Branch[];
}

export interface EnvironmentCoverage {
  environment: string;
  flags: FlagCoverage[];
}

/** The instrumented flags of one environment, and what their evaluations reached. */
export class CoverageTracker {
  readonly branches: Branch[] = [];
  readonly #hits = new Set<number>();
  /** Flag -> index of its `default` (or only) branch. */
  readonly #outcome = new Map<string, number>();
  /** Per traced `fractional`: variant -> its branch. */
  readonly #fractionals = new Map<number, Map<unknown, number>>();
  readonly flags: Map<string, CompiledFlag>;

  constructor(readonly config: EnvironmentConfig) {
    const instrument: RuleInstrument = {
      install: (engine: LogicEngine) => {
        engine.addMethod("$coverage_branch", ((args: [number, unknown]) => {
          this.#hits.add(args[0]);
          return args[1];
        }) as never);
        engine.addMethod("$coverage_fractional", ((args: [number, unknown]) => {
          const [id, result] = args;
          const branch = this.#fractionals.get(id)?.get(result);
          if (branch !== undefined) this.#hits.add(branch);
          return result;
        }) as never);
      },
      // A disabled flag never runs its targeting: its one branch is "disabled".
      rewrite: (flag, resolved) => (config.flags[flag]?.state === "DISABLED" ? resolved : this.#rewrite(flag, resolved, ["targeting"])),
    };
    // Flags in their file order: branches are listed as written.
    for (const [key, def] of Object.entries(config.flags)) {
      const targeted = def.state === "ENABLED" && isRecord(def.targeting) && Object.keys(def.targeting).length > 0;
      // A flag without targeting (or disabled) has one outcome: its only branch.
      if (!targeted)
        this.#outcome.set(
          key,
          this.#add(
            key,
            def.state === "DISABLED" ? "disabled" : "no targeting: defaultVariant",
            def.state === "DISABLED" ? ["state"] : ["defaultVariant"],
          ),
        );
    }
    this.flags = compileEnvironment(config, { instrument }).flags;
    for (const [key, def] of Object.entries(config.flags)) {
      // Targeting that answers a variant on every path never falls back to the default.
      if (this.#outcome.has(key) || alwaysAnswers(def.targeting)) continue;
      this.#outcome.set(key, this.#add(key, `default ("${String(def.defaultVariant)}")`, ["defaultVariant"]));
    }
  }

  /** Counts an evaluation's outcome: the default (targeting returned nothing), the static answer, or disabled. */
  record(flag: string, evaluation: Evaluation): void {
    if (isEvaluationError(evaluation)) return;
    const { reason } = evaluation;
    if (reason === "DEFAULT" || reason === "STATIC" || reason === "DISABLED") {
      const id = this.#outcome.get(flag);
      if (id !== undefined) this.#hits.add(id);
    }
  }

  /** Per flag (of `only`, else all), branches counted and those missed, with their file:line. */
  async report(only?: ReadonlySet<string>): Promise<EnvironmentCoverage> {
    const locate = await locator(this.config);
    const byFlag = new Map<string, FlagCoverage>();
    this.branches.forEach((branch, id) => {
      if (only && !only.has(branch.flag)) return;
      let entry = byFlag.get(branch.flag);
      if (!entry) byFlag.set(branch.flag, (entry = { flag: branch.flag, branches: 0, reached: 0, missed: [] }));
      entry.branches++;
      if (this.#hits.has(id)) entry.reached++;
      else entry.missed.push({ ...branch, ...locate(branch.flag, branch.path) });
    });
    for (const entry of byFlag.values()) entry.missed.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    const order = Object.keys(this.config.flags);
    return { environment: this.config.name, flags: [...byFlag.values()].sort((a, b) => order.indexOf(a.flag) - order.indexOf(b.flag)) };
  }

  #add(flag: string, label: string, path: JsonPath): number {
    this.branches.push({ flag, label, path });
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
        const label = isElse ? `else (${describe(arg)})` : `if branch ${(i + 1) / 2} (${describe(arg)})`;
        return { $coverage_branch: [this.#add(flag, label, [...inner, i]), rewritten] };
      });
      // No else written: it answers null (the default). Traced as its own branch, at the `if`.
      if (args.length % 2 === 0) traced.push({ $coverage_branch: [this.#add(flag, "else (none written: null)", path), null] });
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
        branches.set(variant, this.#add(flag, `fractional bucket ${describe(variant)}${shown}`, [...inner, at]));
      }
      const id = this.#fractionals.size;
      this.#fractionals.set(id, branches);
      return { $coverage_fractional: [id, { fractional: this.#rewrite(flag, args, inner) }] };
    }
    return { [op]: this.#rewrite(flag, args, inner) };
  }
}

/**
 * Whether targeting (as written) answers a variant for every context, so its default can never be
 * reached: a variant name (or boolean or number) written out; a `fractional` whose buckets are
 * written out, none of them null, and that buckets by the targetingKey, a string or a `cat` (which
 * always give a bucketing value; without a targetingKey the answer is an error, not the
 * default); an `if` with an `else` whose every branch is one of these. Anything else may answer
 * null, so its default counts.
 */
export function alwaysAnswers(node: unknown): boolean {
  if (typeof node === "string" || typeof node === "boolean") return true;
  if (typeof node === "number") return Number.isFinite(node);
  if (!isRecord(node) || Object.keys(node).length !== 1) return false;
  const [op, args] = Object.entries(node)[0]!;
  if (op === "if" || op === "?:") {
    if (!Array.isArray(args) || args.length < 3 || args.length % 2 === 0) return false;
    return args.every((arg, i) => (i % 2 === 0 && i !== args.length - 1 ? true : alwaysAnswers(arg)));
  }
  if (op === "fractional" && Array.isArray(args) && args.length > 0) {
    const explicit = !Array.isArray(args[0]);
    if (explicit && typeof args[0] !== "string" && !(isRecord(args[0]) && Object.keys(args[0]).join() === "cat")) return false;
    const distribution = parseDistribution(explicit ? args.slice(1) : args);
    // A variant with no weight is never picked, so a null one there does not matter.
    return (
      distribution !== null && distribution.variants.every((v, i) => v !== null || distribution.ends[i] === (distribution.ends[i - 1] ?? 0))
    );
  }
  return false;
}

const describe = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value !== "object") return String(value);
  return JSON.stringify(value).length <= 30 ? JSON.stringify(value) : "an expression";
};

/**
 * Flag key and path inside its definition -> file:line, from the environment's files (parsed
 * again here, with positions: coverage is reported once per run).
 */
async function locator(config: EnvironmentConfig): Promise<(flag: string, path: JsonPath) => { file?: string; line?: number }> {
  const docs: { source: Source; prefix: JsonPath; flags: Record<string, unknown> }[] = [];
  for (const file of config.files) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text === undefined) continue;
    const parsed = parseYaml(file, text);
    if (!parsed.source || !isRecord(parsed.value)) continue;
    const inMulti = isRecord(parsed.value.environments) ? parsed.value.environments[config.name] : undefined;
    const prefix = isRecord(inMulti) ? ["environments", config.name] : [];
    const doc = isRecord(inMulti) ? inMulti : parsed.value;
    if (isRecord(doc.flags)) docs.push({ source: parsed.source, prefix, flags: doc.flags });
  }
  return (flag, path) => {
    // The last file defining the flag is the one that counts (files merge in order).
    const doc = docs.findLast((d) => Object.hasOwn(d.flags, flag));
    if (!doc) return config.files.length === 1 ? { file: config.files[0] } : {};
    return { file: doc.source.file, line: doc.source.locate([...doc.prefix, "flags", flag, ...path]).line };
  };
}
