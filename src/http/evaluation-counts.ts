/**
 * `flagserve_evaluations_total{environment, flag, variant, reason}`: every evaluation counted
 * where it happens, so the counting must stay cheap (a few map lookups, no label text built per
 * evaluation; the text is built when /metrics is read). Cardinality is bounded by the
 * configuration: only flags that exist get a series of their own, any other key requested is
 * counted under `flag="(other)"`, and variants are those of the flag's definition.
 */
import { isEvaluationError, type Evaluation } from "../engine/types.js";
import { formatSample } from "./metrics.js";

export const OTHER_FLAG = "(other)";
const NAME = "flagserve_evaluations_total";
const HELP = `Flag evaluations by environment, flag, variant and reason (reason ERROR for errors; keys not in the configuration as flag="${OTHER_FLAG}")`;

const REASONS = ["STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT", "DISABLED", "ERROR"] as const;
type ReasonCounts = Record<(typeof REASONS)[number], number>;
/** A fixed shape, so `counts[reason]++` is a property access, not another hash lookup. */
const zeroCounts = (): ReasonCounts => ({ STATIC: 0, TARGETING_MATCH: 0, SPLIT: 0, DEFAULT: 0, DISABLED: 0, ERROR: 0 });

/** variant ("" when none) -> counts by reason */
type FlagCounts = Map<string, ReasonCounts>;

/** One environment's counts; fetched once per request, then `count` per evaluation. */
export class EnvironmentCounts {
  readonly flags = new Map<string, FlagCounts>();

  count(flagKey: string, e: Evaluation): void {
    const error = isEvaluationError(e);
    this.add(flagKey, error ? "ERROR" : e.reason, error ? "" : (e.variant ?? ""));
  }

  /** One evaluate-all: `outcomes[i]` is the evaluation of `keys[i]`. */
  countAll(keys: readonly string[], outcomes: readonly Evaluation[]): void {
    for (let i = 0; i < keys.length; i++) this.count(keys[i]!, outcomes[i]!);
  }

  /** A key the environment does not have (FLAG_NOT_FOUND). */
  countUnknown(): void {
    this.add(OTHER_FLAG, "ERROR", "");
  }

  private add(flag: string, reason: keyof ReasonCounts, variant: string): void {
    let byVariant = this.flags.get(flag);
    if (!byVariant) this.flags.set(flag, (byVariant = new Map()));
    let counts = byVariant.get(variant);
    if (!counts) byVariant.set(variant, (counts = zeroCounts()));
    counts[reason]++;
  }
}

export class EvaluationCounts {
  #environments = new Map<string, EnvironmentCounts>();

  environment(name: string): EnvironmentCounts {
    let counts = this.#environments.get(name);
    if (!counts) this.#environments.set(name, (counts = new EnvironmentCounts()));
    return counts;
  }

  /** Prometheus text lines (none before the first evaluation). */
  render(): string[] {
    const lines: string[] = [];
    for (const [environment, counts] of this.#environments) {
      for (const [flag, byVariant] of counts.flags) {
        for (const [variant, byReason] of byVariant) {
          for (const reason of REASONS) {
            const n = byReason[reason];
            if (n > 0) lines.push(formatSample(NAME, { environment, flag, variant, reason }, n));
          }
        }
      }
    }
    return lines.length === 0 ? [] : [`# HELP ${NAME} ${HELP}`, `# TYPE ${NAME} counter`, ...lines];
  }
}
