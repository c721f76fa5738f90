/**
 * `flagserve_evaluations_total{environment, flag, variant, reason}`: every evaluation counted
 * where it happens, so the counting must stay cheap (a few map lookups, no label text built per
 * evaluation; the text is built when /metrics is read). Cardinality is bounded by the
 * configuration: only flags that exist get a series of their own, any other key requested is
 * counted under `flag="(other)"`, and variants are those of the flag's definition.
 */
import { isEvaluationError, type Evaluation } from "../engine/types.js";
import { formatSample } from "../model/prometheus.js";
import { OutcomeTable } from "./outcome-memo.js";

export const OTHER_FLAG = "(other)";
const NAME = "flagserve_evaluations_total";
const HELP = `Flag evaluations by environment, flag, variant and reason (reason ERROR for errors; keys not in the configuration as flag="${OTHER_FLAG}")`;

const REASONS = ["STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT", "DISABLED", "ERROR"] as const;
const REASON_INDEX: Readonly<Record<(typeof REASONS)[number], number>> = {
  STATIC: 0,
  TARGETING_MATCH: 1,
  SPLIT: 2,
  DEFAULT: 3,
  DISABLED: 4,
  ERROR: 5,
};
/** Counts by reason, indexed as REASONS: `counts[i]++` is an array store, not another hash lookup. */
type ReasonCounts = Float64Array;
const zeroCounts = (): ReasonCounts => new Float64Array(REASONS.length);

/** variant ("" when none) -> counts by reason */
type FlagCounts = Map<string, ReasonCounts>;

/** Where one evaluation is counted: its flag and variant's counts, and its reason's index. */
interface Counted {
  slot: ReasonCounts;
  reason: number;
}

/** For an evaluate-all answer served more than once: where each flag's outcome is counted, resolved once. */
interface Tally {
  counted: Counted[];
  /** Times served and not yet added to the counts (see `#settle`). */
  owed: number;
}

/**
 * Tallies owed at most: past this many, they are added to the counts at once, so that the
 * tallies held for it stay few when /metrics is seldom read.
 */
const MAX_OWING = 256;

/** Computed evaluate-all answers counted at once (see `countAll`). */
const MAX_PENDING = 32;

/** One environment's counts; fetched once per request, then `count` per evaluation. */
export class EnvironmentCounts {
  #flags = new Map<string, FlagCounts>();
  /** By a repeated answer's outcomes, its tally. */
  #tallies = new WeakMap<readonly Evaluation[], Tally>();
  /** Tallies with served answers not yet in the counts: a served answer costs one increment, not one per flag. */
  #owing = new Set<Tally>();
  /**
   * By outcome: a flag's successes are shared, frozen objects (engine/outcomes.ts), so one lookup
   * finds where an evaluation is counted; they go away with the compiled flags on reload.
   */
  #byOutcome = new WeakMap<Evaluation, Counted>();
  /** Evaluate-all answers: per flag list (a snapshot's keys) and flag, where its outcomes are counted. */
  #byIndex = new WeakMap<readonly string[], OutcomeTable<Counted>>();
  /** Computed answers not counted yet (see `countAll`). */
  #pending: [keys: readonly string[], outcomes: readonly Evaluation[]][] = [];

  count(flagKey: string, e: Evaluation): void {
    const known = this.#byOutcome.get(e);
    if (known !== undefined && e.key === flagKey) {
      known.slot[known.reason]!++;
      return;
    }
    const counted = this.#counted(flagKey, e);
    if (Object.isFrozen(e) && e.key === flagKey) this.#byOutcome.set(e, counted);
    counted.slot[counted.reason]!++;
  }

  /**
   * One evaluate-all: `outcomes[i]` is the evaluation of `keys[i]`. An answer served again from
   * the cache (`repeated`) is counted on its tally, and added to each flag's counts when they are
   * read. The caller's contract (BulkAnswer.outcomes): `repeated` is true exactly when `outcomes`
   * is an array passed here before, unchanged; a new answer passes a new array.
   */
  countAll(keys: readonly string[], outcomes: readonly Evaluation[], repeated = false): void {
    if (!repeated) {
      // Counted in batches: a hundred flags' counts touched once per batch rather than once per
      // request, between which serving a request has pushed them out of the processor's caches.
      if (this.#pending.push([keys, outcomes]) >= MAX_PENDING) this.#countPending();
      return;
    }
    let tally = this.#tallies.get(outcomes);
    if (tally === undefined) {
      const table = this.#tableFor(keys);
      tally = { counted: outcomes.map((e, i) => this.#countedAt(table, keys, i, e)), owed: 0 };
      this.#tallies.set(outcomes, tally);
    }
    if (tally.owed++ === 0) {
      this.#owing.add(tally);
      if (this.#owing.size > MAX_OWING) this.#settle();
    }
  }

  #countPending(): void {
    for (const [keys, outcomes] of this.#pending) {
      const table = this.#tableFor(keys);
      for (let i = 0; i < keys.length; i++) {
        const counted = this.#countedAt(table, keys, i, outcomes[i]!);
        counted.slot[counted.reason]!++;
      }
    }
    this.#pending.length = 0;
  }

  /** Where `e`, the evaluation of `keys[i]`, is counted, found among the outcomes seen for that flag. */
  #countedAt(table: OutcomeTable<Counted>, keys: readonly string[], i: number, e: Evaluation): Counted {
    let counted = table.get(i, e);
    if (counted === undefined) table.remember(i, e, (counted = this.#counted(keys[i]!, e)));
    return counted;
  }

  #tableFor(keys: readonly string[]): OutcomeTable<Counted> {
    let table = this.#byIndex.get(keys);
    if (table === undefined) this.#byIndex.set(keys, (table = new OutcomeTable<Counted>(keys.length)));
    return table;
  }

  #counted(flagKey: string, e: Evaluation): Counted {
    return { slot: this.slot(flagKey, e), reason: reasonOf(e) };
  }

  /** The counts by flag and variant, every served answer added. */
  settled(): ReadonlyMap<string, FlagCounts> {
    this.#countPending();
    this.#settle();
    return this.#flags;
  }

  /** Adds what the tallies owe to the counts. */
  #settle(): void {
    for (const tally of this.#owing) {
      for (const { slot, reason } of tally.counted) slot[reason]! += tally.owed;
      tally.owed = 0;
    }
    this.#owing.clear();
  }

  /** A key the environment does not have (FLAG_NOT_FOUND). */
  countUnknown(): void {
    this.add(OTHER_FLAG, REASON_INDEX.ERROR, "");
  }

  private add(flag: string, reason: number, variant: string): void {
    this.counts(flag, variant)[reason]!++;
  }

  private slot(flagKey: string, e: Evaluation): ReasonCounts {
    return this.counts(flagKey, isEvaluationError(e) ? "" : (e.variant ?? ""));
  }

  private counts(flag: string, variant: string): ReasonCounts {
    let byVariant = this.#flags.get(flag);
    if (!byVariant) this.#flags.set(flag, (byVariant = new Map()));
    let counts = byVariant.get(variant);
    if (!counts) byVariant.set(variant, (counts = zeroCounts()));
    return counts;
  }
}

const reasonOf = (e: Evaluation): number => (isEvaluationError(e) ? REASON_INDEX.ERROR : REASON_INDEX[e.reason]);

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
      for (const [flag, byVariant] of counts.settled()) {
        for (const [variant, byReason] of byVariant) {
          REASONS.forEach((reason, i) => {
            const n = byReason[i]!;
            if (n > 0) lines.push(formatSample(NAME, { environment, flag, variant, reason }, n));
          });
        }
      }
    }
    return lines.length === 0 ? [] : [`# HELP ${NAME} ${HELP}`, `# TYPE ${NAME} counter`, ...lines];
  }
}
