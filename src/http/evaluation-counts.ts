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

/** reason -> variant ("" when none) -> count */
type FlagCounts = Map<string, Map<string, number>>;

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

  private add(flag: string, reason: string, variant: string): void {
    let byReason = this.flags.get(flag);
    if (!byReason) this.flags.set(flag, (byReason = new Map()));
    let byVariant = byReason.get(reason);
    if (!byVariant) byReason.set(reason, (byVariant = new Map()));
    byVariant.set(variant, (byVariant.get(variant) ?? 0) + 1);
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
      for (const [flag, byReason] of counts.flags) {
        for (const [reason, byVariant] of byReason) {
          for (const [variant, n] of byVariant) lines.push(formatSample(NAME, { environment, flag, variant, reason }, n));
        }
      }
    }
    return lines.length === 0 ? [] : [`# HELP ${NAME} ${HELP}`, `# TYPE ${NAME} counter`, ...lines];
  }
}
