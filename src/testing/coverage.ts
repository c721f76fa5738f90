/**
 * Rule coverage in the engine's terms: which branches of each flag's targeting evaluations
 * reached. The environment is compiled again with tracing (engine/trace.ts) that reports every
 * `if` branch and `fractional` variant an evaluation passes through; the answer's reason says
 * when the default was reached. Only `flagserve test --coverage` builds this; the server never does.
 *
 * Only branches some context can reach are counted (docs/testing-flags.md, "Rule coverage"): the
 * default is left out when the targeting answers a variant on every path (alwaysAnswers), and a
 * `fractional` counts one branch per variant that has buckets (weight above 0). Conditions are
 * not judged: whether a context meets one is what the cases are for.
 */
import { readFile } from "node:fs/promises";
import { parseYaml } from "../config/parse.js";
import type { Source } from "../config/positions.js";
import { parseDistribution } from "../engine/fractional.js";
import { RuleTracer } from "../engine/trace.js";
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
  readonly branches: Branch[];
  readonly #hits = new Set<number>();
  /** Flag -> index of its `default` (or only) branch. */
  readonly #outcome = new Map<string, number>();
  readonly flags: ReadonlyMap<string, CompiledFlag>;

  constructor(readonly config: EnvironmentConfig) {
    const tracer = new RuleTracer(config, (branch) => this.#hits.add(branch));
    this.flags = tracer.flags;
    this.branches = tracer.branches.map(({ flag, label, path }) => ({ flag, label, path }));
    for (const [key, def] of Object.entries(config.flags)) {
      const targeted = def.state === "ENABLED" && isRecord(def.targeting) && Object.keys(def.targeting).length > 0;
      // A flag without targeting (or disabled) has one outcome: its only branch. Targeting that
      // answers a variant on every path never falls back to the default.
      if (!targeted) {
        const disabled = def.state === "DISABLED";
        this.#outcome.set(
          key,
          this.#add(key, disabled ? "disabled" : "no targeting: defaultVariant", disabled ? ["state"] : ["defaultVariant"]),
        );
      } else if (!alwaysAnswers(def.targeting)) {
        this.#outcome.set(key, this.#add(key, `default ("${String(def.defaultVariant)}")`, ["defaultVariant"]));
      }
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

/**
 * Flag key and path inside its definition -> file:line, from the environment's files (parsed
 * again here, with positions: coverage is reported once per run).
 */
export async function locator(config: EnvironmentConfig): Promise<(flag: string, path: JsonPath) => { file?: string; line?: number }> {
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
