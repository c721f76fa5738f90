/**
 * The evaluation engine beside @openfeature/flagd-core (flagd's JavaScript in-process evaluator,
 * compiled json-logic-engine mode, its default), in-process, no HTTP: the shared 100-flag fixture
 * and the same `--contexts` contexts for both.
 *
 * First every (flag, context) answer is compared (value, variant, reason); any difference not
 * listed in EXPLAINED fails the run. Then a 100-flag pass is timed for each engine: ours is what
 * the evaluate-all route computes for a context (contextAttributes once, one evaluatorFor the
 * context, every flag in key order; static ones too, which the route serializes once per load),
 * theirs is `FlagdCore.resolveAll` (which skips the disabled flags, which only helps it).
 *
 *   npm run bench:engine                          # 5 s per measurement, 3 runs
 *   npm run bench:engine -- --seconds 1 --runs 1  # a quick check
 */
import { parseArgs } from "node:util";
import { FlagdCore } from "@openfeature/flagd-core";
import { loadInlineConfig } from "../src/config/index.js";
import {
  compileEnvironment,
  contextAttributes,
  evaluate,
  evaluatorFor,
  isEvaluationError,
  type CompiledFlag,
  type Evaluation,
} from "../src/engine/index.js";
import { benchContexts, benchEnvironment, header, median, printRatios, printTable } from "./lib.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    runs: { type: "string", default: "3" },
    contexts: { type: "string", default: "1000" },
  },
});
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const FLAGD_CORE = "@openfeature/flagd-core 4.0.1";

type Context = Record<string, string>;
const silent = { error() {}, warn() {}, info() {}, debug() {} };
const doc = benchEnvironment(100);
const contexts = benchContexts(Number(values.contexts));
/** Flags whose `fractional` buckets by the targeting key (no bucketing expression of their own). */
const bucketsByTargetingKey = (key: string) => JSON.stringify(doc.flags[key]).includes('"fractional":[[');
const nonAscii = (ctx: Context) => /[^\x00-\x7f]/.test(String(ctx.targetingKey));

// ---- the two engines --------------------------------------------------------------------------

async function ourEngine(): Promise<{ keys: string[]; flags: ReadonlyMap<string, CompiledFlag> }> {
  const load = await loadInlineConfig({ bench: doc });
  const env = load.environments.get("bench");
  if (!env) throw new Error(`the fixture does not load: ${JSON.stringify([...load.problems.values()])}`);
  const { flags, errors } = compileEnvironment(env.config);
  if (errors.length > 0) throw new Error(`the fixture does not compile: ${JSON.stringify(errors)}`);
  return { keys: [...flags.keys()].sort(), flags };
}

function theirEngine(): FlagdCore {
  const core = new FlagdCore(undefined, silent);
  core.setConfigurations(JSON.stringify({ flags: doc.flags, $evaluators: doc.$evaluators }));
  return core;
}

// ---- answers compared ---------------------------------------------------------------------------

interface Answer {
  value?: unknown;
  variant?: string;
  reason: string;
}

/**
 * Documented differences (README "Where flagserve differs from flagd"; reference notes on
 * flagd-core 4.0.1), each a predicate over one mismatching pair: true = explained.
 */
const EXPLAINED: Record<string, (key: string, ctx: Context, ours: Answer, theirs: Answer | undefined) => boolean> = {
  // flagd (and flagd-core) report a fractional result as TARGETING_MATCH; flagserve says SPLIT.
  "SPLIT where flagd says TARGETING_MATCH": (_k, _c, ours, theirs) =>
    ours.reason === "SPLIT" && theirs?.reason === "TARGETING_MATCH" && ours.variant === theirs.variant,
  // flagd-core hashes UTF-16 code units (imurmurhash); flagserve hashes UTF-8 bytes like Go flagd.
  "non-ASCII bucketing key hashed as UTF-16 by flagd-core": (key, ctx, ours, theirs) =>
    bucketsByTargetingKey(key) && nonAscii(ctx) && theirs !== undefined && ["SPLIT", "TARGETING_MATCH"].includes(ours.reason),
  // resolveAll leaves disabled flags out; resolve() says DISABLED, checked separately below.
  "disabled flag left out of resolveAll": (_k, _c, ours, theirs) => ours.reason === "DISABLED" && theirs === undefined,
};

const oursAsAnswer = (e: Evaluation): Answer =>
  isEvaluationError(e) ? { reason: `ERROR ${e.errorCode}` } : { value: e.value, variant: e.variant, reason: e.reason };

const same = (a: Answer, b: Answer | undefined) =>
  b !== undefined && a.reason === b.reason && a.variant === b.variant && JSON.stringify(a.value) === JSON.stringify(b.value);

function compareAnswers(ours: Awaited<ReturnType<typeof ourEngine>>, theirs: FlagdCore): Map<string, number> {
  const explained = new Map<string, number>();
  const unexplained: string[] = [];
  const now = Date.now();
  for (const ctx of contexts) {
    const attrs = contextAttributes(ctx);
    const all = new Map(
      theirs.resolveAll(ctx, silent).map((d) => [d.flagKey, { value: d.value, variant: d.variant, reason: d.reason! } as Answer]),
    );
    for (const key of ours.keys) {
      const a = oursAsAnswer(evaluate(ours.flags.get(key)!, attrs, now));
      const b = all.get(key);
      if (same(a, b)) continue;
      const why = Object.keys(EXPLAINED).find((name) => EXPLAINED[name]!(key, ctx, a, b));
      if (why) explained.set(why, (explained.get(why) ?? 0) + 1);
      else
        unexplained.push(`${key} ${JSON.stringify(ctx)}: flagserve ${JSON.stringify(a)}, flagd-core ${JSON.stringify(b ?? "(left out)")}`);
    }
  }
  for (const key of ours.keys.filter((k) => ours.flags.get(k)!.state === "DISABLED")) {
    const reason = theirs.resolve("boolean", key, false, contexts[0], silent).reason;
    if (reason !== "DISABLED") unexplained.push(`${key}: disabled, flagd-core resolve() says ${reason}`);
  }
  if (unexplained.length > 0) {
    console.error(
      `${unexplained.length} answers differ from ${FLAGD_CORE} without an explanation:\n${unexplained.slice(0, 20).join("\n")}`,
    );
    process.exit(1);
  }
  return explained;
}

// ---- timing -------------------------------------------------------------------------------------

let sink = 0;
const passes = {
  flagserve: (ours: Awaited<ReturnType<typeof ourEngine>>) => {
    const inKeyOrder = ours.keys.map((key) => ours.flags.get(key)!); // as the route's plan holds them
    return (ctx: Context) => {
      const evaluateFor = evaluatorFor(contextAttributes(ctx), Date.now());
      for (const flag of inKeyOrder) sink += evaluateFor(flag).key.length;
    };
  },
  flagdCore: (theirs: FlagdCore) => (ctx: Context) => {
    sink += theirs.resolveAll(ctx, silent).length;
  },
};

/** Microseconds per pass, over `seconds`, rotating through the contexts. */
function time(pass: (ctx: Context) => void, secs: number): number {
  const end = performance.now() + secs * 1000;
  const start = performance.now();
  let n = 0;
  while (n % 64 !== 0 || performance.now() < end) pass(contexts[n++ % contexts.length]!);
  return ((performance.now() - start) * 1000) / n;
}

const ours = await ourEngine();
const theirs = theirEngine();
const explained = compareAnswers(ours, theirs);
const pairs = ours.keys.length * contexts.length;
header(`${ours.keys.length} flags x ${contexts.length} contexts, ${seconds} s per measurement, median of ${runs} run(s)`);
console.log(`answers: ${pairs} (flag, context) pairs compared with ${FLAGD_CORE}, no unexplained difference`);
for (const [why, count] of explained) console.log(`  explained: ${count} x ${why}`);

const oursPass = passes.flagserve(ours);
const theirPass = passes.flagdCore(theirs);
time(oursPass, Math.min(1, seconds)); // warm-up, not counted
time(theirPass, Math.min(1, seconds));
const us: { ours: number[]; theirs: number[] } = { ours: [], theirs: [] };
for (let run = 0; run < runs; run++) {
  us.ours.push(time(oursPass, seconds));
  us.theirs.push(time(theirPass, seconds));
}
const [a, b] = [median(us.ours), median(us.theirs)];
const faster = b >= a ? `${(b / a).toFixed(1)}x faster` : `${(a / b).toFixed(1)}x slower`;
console.log("");
printTable(
  ["100-flag pass", "flagserve", FLAGD_CORE, "ratio"],
  [
    ["µs per pass", a.toFixed(1), b.toFixed(1), faster],
    ["passes per second", Math.round(1e6 / a), Math.round(1e6 / b), ""],
  ],
);
printRatios(`bench:engine (vs ${FLAGD_CORE})`, [["100-flag pass", faster]]);
if (sink === 0) console.log("(nothing evaluated)");
