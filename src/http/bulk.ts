/**
 * Evaluate-all answers (DESIGN §5). An answer is a pure function of the environment snapshot,
 * the context and, only where a flag can read `$flagd.timestamp`, the current second. So each
 * snapshot gets a plan (flags that need no evaluation serialized once, the fixed end of the body)
 * and a bounded cache of answers by request body: a repeated request, a 304 above all, costs a
 * lookup instead of an evaluation. Snapshots are immutable and replaced whole on every reload,
 * so both are keyed by the snapshot object and go away with it.
 */
import { evaluate, evaluatorFor } from "../engine/index.js";
import type { CompiledFlag, Evaluation } from "../engine/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { AnswerCache } from "./answer-cache.js";
import { bulkEtag } from "./etag.js";
import { bulkItemJson } from "../evaluation/shape.js";

export interface BulkAnswer {
  /** JSON text: h3 hands a string to the Node response as is, with its Content-Length. */
  body: string;
  /**
   * The same as UTF-8 bytes, for the Node fast path: encoded once an answer is served a second
   * time, then kept (a first answer goes out as text: most are never asked for again).
   */
  bytes?: Buffer;
  etag: string;
  /** Each flag's evaluation, in key order: counted for /metrics and recorded in sessions, cache hits included. */
  outcomes: readonly Evaluation[];
}

/** Answers kept per environment, in bytes of request and response bodies (about 1 000 answers of 100 flags). */
export const DEFAULT_BULK_CACHE_BYTES = 8 * 1024 * 1024;

interface Plan {
  /** In key order: an item's JSON when it is the same for every context, else the flag to evaluate. */
  items: (string | CompiledFlag)[];
  /** The evaluations of the items that are the same for every context (by index). */
  fixed: (Evaluation | undefined)[];
  /** Everything after the flags array. */
  tail: string;
  /** Some flag may read the clock: an answer holds only within the second it was computed in. */
  readsClock: boolean;
  cache: AnswerCache<BulkAnswer>;
}

export interface BulkOptions {
  /** The path (and query) of the OFREP event stream advertised in `eventStreams`, when there is one. */
  eventStreamPath?: (snapshot: EnvironmentSnapshot) => string;
  /** Bytes of answers kept per environment; 0 turns the cache off. */
  cacheBytes?: number;
}

function planFor(snapshot: EnvironmentSnapshot, options: BulkOptions): Plan {
  const fixed: (Evaluation | undefined)[] = [];
  const items = snapshot.flagKeys.map((key, i) => {
    const flag = snapshot.flags.get(key)!;
    // Disabled flags and flags without targeting answer the same whatever the context and time.
    if (flag.state !== "DISABLED" && flag.rule) return flag;
    const outcome = (fixed[i] = evaluate(flag, {}, 0));
    return bulkItemJson(outcome);
  });
  // An `endpoint` without `origin`: the client resolves it against the origin it called, so
  // nothing here depends on the request's Host header (which any client can set).
  const eventStreams = options.eventStreamPath
    ? [{ type: "sse", endpoint: { requestUri: options.eventStreamPath(snapshot) }, inactivityDelaySec: 120 }]
    : undefined;
  const tail = `],"metadata":${JSON.stringify(snapshot.config.metadata)}${eventStreams ? `,"eventStreams":${JSON.stringify(eventStreams)}` : ""}}`;
  const readsClock = items.some((item) => typeof item !== "string" && !item.clockFree);
  // Text and bytes (about as long, counted before they exist), and an outcome held by an answer
  // counts as about 64 bytes beside them.
  const cache = new AnswerCache<BulkAnswer>(options.cacheBytes ?? DEFAULT_BULK_CACHE_BYTES, (answer) => 2 * answer.body.length + 64 * answer.outcomes.length);
  return { items, fixed, tail, readsClock, cache };
}

function compute(snapshot: EnvironmentSnapshot, plan: Plan, context: Record<string, unknown>, nowMs: number): BulkAnswer {
  let json = '{"flags":[';
  const evaluate = evaluatorFor(context, nowMs);
  const outcomes: Evaluation[] = new Array(plan.items.length);
  for (let i = 0; i < plan.items.length; i++) {
    const item = plan.items[i]!;
    if (i > 0) json += ",";
    if (typeof item === "string") {
      json += item;
      outcomes[i] = plan.fixed[i]!;
    } else {
      const outcome = (outcomes[i] = evaluate(item));
      json += bulkItemJson(outcome);
    }
  }
  json += plan.tail;
  return { body: json, etag: bulkEtag(snapshot.configEtag, json), outcomes };
}

/**
 * The evaluate-all answerer: `(snapshot, scope, request body, context reader, now)` -> body and
 * ETag. The scope is whatever else than the body the context depends on ("" when nothing: see
 * fixture/enrich.ts). `contextOf(body)` is only called on a miss, so it may throw the request's
 * 400. `now` is the time evaluations read: the clock when absent, read only when a flag needs it.
 */
export function createBulkAnswers(options: BulkOptions = {}) {
  const plans = new WeakMap<EnvironmentSnapshot, Plan>();
  return (snapshot: EnvironmentSnapshot, scope: string, request: string, contextOf: (request: string) => Record<string, unknown>, nowMs?: number): BulkAnswer => {
    let plan = plans.get(snapshot);
    if (!plan) plans.set(snapshot, (plan = planFor(snapshot, options)));
    const second = plan.readsClock ? Math.floor((nowMs ??= Date.now()) / 1000) : 0;
    const kept = plan.cache.get(scope, request, second);
    if (kept !== undefined) {
      kept.bytes ??= Buffer.from(kept.body); // served a second time: worth its bytes
      return kept;
    }
    const answer = compute(snapshot, plan, contextOf(request), nowMs ?? Date.now());
    plan.cache.set(scope, request, second, answer);
    return answer;
  };
}
