/** Per-flag evaluation counts: every evaluate-all answer served counts once per flag, however it was served. */
import { describe, expect, it } from "vitest";
import type { Evaluation } from "../../src/engine/types.js";
import { EvaluationCounts } from "../../src/answers/evaluation-counts.js";

const KEYS = ["a", "b", "c"];

/** The outcomes of one evaluate-all answer, as bulk.ts keeps them: one array per cached answer. */
const outcomesFor = (variant: string): Evaluation[] => [
  Object.freeze({ key: "a", reason: "TARGETING_MATCH", variant, value: variant, metadata: {} }),
  Object.freeze({ key: "b", reason: "STATIC", variant: "on", value: true, metadata: {} }),
  { key: "c", errorCode: "TARGETING_KEY_MISSING", errorDetails: "no targeting key", metadata: {} },
];

/** The sample lines as `labels -> count`. */
function samples(counts: EvaluationCounts): Record<string, number> {
  const lines = counts.render().filter((line) => !line.startsWith("#"));
  return Object.fromEntries(
    lines.map((line) => [line.slice(line.indexOf("{"), line.lastIndexOf(" ")), Number(line.slice(line.lastIndexOf(" ") + 1))]),
  );
}

const series = (flag: string, variant: string, reason: string) =>
  `{environment="dev",flag="${flag}",variant="${variant}",reason="${reason}"}`;

describe("EvaluationCounts", () => {
  it("counts an answer served again and again as often as it was served, read between serves or not", () => {
    const counts = new EvaluationCounts();
    const red = outcomesFor("red");
    let served = false;
    const serve = (times: number) => {
      for (let i = 0; i < times; i++) counts.environment("dev").countAll(KEYS, red, served);
      served = true;
    };
    serve(1); // computed: counted flag by flag
    serve(1); // served again from the cache: its tally built
    serve(3); // counted on the tally
    expect(samples(counts)).toEqual({
      [series("a", "red", "TARGETING_MATCH")]: 5,
      [series("b", "on", "STATIC")]: 5,
      [series("c", "", "ERROR")]: 5,
    });
    serve(2);
    expect(samples(counts)).toEqual({
      [series("a", "red", "TARGETING_MATCH")]: 7,
      [series("b", "on", "STATIC")]: 7,
      [series("c", "", "ERROR")]: 7,
    });
    // Read twice with nothing served between: the same counts.
    expect(samples(counts)[series("a", "red", "TARGETING_MATCH")]).toBe(7);
  });

  it("keeps every count when more answers are served than it holds tallies for", () => {
    const counts = new EvaluationCounts();
    const answers = Array.from({ length: 1000 }, (_, i) => outcomesFor(`v${i % 10}`));
    // Each answer three times, in rounds: far more answers owed at once than the tallies kept.
    for (let round = 0; round < 3; round++) for (const outcomes of answers) counts.environment("dev").countAll(KEYS, outcomes, round > 0);
    const counted = samples(counts);
    for (let v = 0; v < 10; v++) expect(counted[series("a", `v${v}`, "TARGETING_MATCH")]).toBe(300);
    expect(counted[series("b", "on", "STATIC")]).toBe(3000);
    expect(counted[series("c", "", "ERROR")]).toBe(3000);
  });

  it("counts computed answers flag by flag, whichever of a flag's outcomes they hold, for each snapshot's flag list", () => {
    const counts = new EvaluationCounts();
    // 40 variants: more outcomes of one flag than are remembered; and a second flag list (a reload).
    const variants = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const frozen = variants.map((variant) => outcomesFor(variant));
    const reloadedKeys = [...KEYS];
    for (const keys of [KEYS, reloadedKeys])
      for (let round = 0; round < 2; round++) for (const outcomes of frozen) counts.environment("dev").countAll(keys, outcomes);
    const counted = samples(counts);
    for (const variant of variants) expect(counted[series("a", variant, "TARGETING_MATCH")]).toBe(4);
    expect(counted[series("b", "on", "STATIC")]).toBe(160);
    expect(counted[series("c", "", "ERROR")]).toBe(160);
  });

  it("counts single evaluations beside served answers, per environment", () => {
    const counts = new EvaluationCounts();
    const red = outcomesFor("red");
    for (let i = 0; i < 4; i++) counts.environment("dev").countAll(KEYS, red, i > 0);
    counts.environment("dev").count("a", red[0]!);
    counts.environment("prod").count("a", red[0]!);
    counts.environment("dev").countUnknown();
    const counted = samples(counts);
    expect(counted[series("a", "red", "TARGETING_MATCH")]).toBe(5);
    expect(counted['{environment="prod",flag="a",variant="red",reason="TARGETING_MATCH"}']).toBe(1);
    expect(counted['{environment="dev",flag="(other)",variant="",reason="ERROR"}']).toBe(1);
  });
});
