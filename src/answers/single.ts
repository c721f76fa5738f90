/**
 * Single-flag answers (`POST /ofrep/v1/evaluate/flags/{key}`), kept in a bounded cache per
 * snapshot: an answer is a pure function of the flag, the context and, only for a flag that can
 * read `$flagd.timestamp`, the current second. Unlike evaluate-all's cache (bulk.ts), which keeps
 * an answer from its request's second time, this one keeps every answer from the first: a
 * single-flag answer is a hundred bytes, not kilobytes, so one that never comes back costs the
 * cache little. Errors thrown (invalid JSON or context, unknown flag) are never kept.
 */
import type { CompiledFlag, Evaluation } from "../engine/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { AnswerCache } from "./answer-cache.js";
import { parseJsonBody } from "../evaluation/context.js";
import { flagResponse } from "../evaluation/ofrep-bodies.js";

export interface SingleAnswer {
  status: 200 | 400;
  json: string;
  /** The evaluation (counted for /metrics and recorded in sessions, cache hits included). */
  result: Evaluation;
}

export interface SingleRequestOptions {
  /** Changes the context before evaluation (fixture/enrich.ts)... */
  enrich?: (attributes: Record<string, unknown>) => Record<string, unknown>;
  /** ...and what else than the body the answer then depends on, for the cache key. */
  cacheKey?: string;
}

const NO_OPTIONS: SingleRequestOptions = {};

/** Answers kept per environment, in bytes of request and response bodies. */
export const DEFAULT_SINGLE_CACHE_BYTES = 2 * 1024 * 1024;

export function createSingleAnswers(cacheBytes = DEFAULT_SINGLE_CACHE_BYTES) {
  // After a reload, the last snapshot's cache goes at the next request.
  const caches = new WeakMap<EnvironmentSnapshot, AnswerCache<SingleAnswer>>();
  /** `nowMs`: the time evaluations read (the clock when absent, read only when a flag needs it). */
  return (
    snapshot: EnvironmentSnapshot,
    key: string,
    request: string,
    nowMs?: number,
    options: SingleRequestOptions = NO_OPTIONS,
  ): SingleAnswer => {
    const flag = snapshot.flags.get(key);
    if (!flag) return answerTo(undefined, key, request, 0, options); // throws: the request's 400 or the 404, in that order
    let cache = caches.get(snapshot);
    if (!cache) caches.set(snapshot, (cache = new AnswerCache<SingleAnswer>(cacheBytes, (answer) => answer.json.length)));
    const second = flag.clockFree ? 0 : Math.floor((nowMs ??= Date.now()) / 1000);
    // The scope: the flag key, length-prefixed when the answer depends on more (a cache serves
    // one OfrepAnswerer, which enriches every request or none, so scopes of both kinds never meet).
    const scope = options.cacheKey === undefined ? key : `${key.length}:${key}${options.cacheKey}`;
    const cached = cache.get(scope, request, second);
    if (cached !== undefined) return cached;
    const answer = answerTo(flag, key, request, nowMs ?? Date.now(), options);
    cache.set(scope, request, second, answer);
    return answer;
  };
}

/** The answer computed (evaluation/ofrep-bodies.ts): throws the request's 400 (invalid JSON or context), then, without a flag, the 404. */
function answerTo(
  flag: CompiledFlag | undefined,
  key: string,
  request: string,
  nowMs: number,
  options: SingleRequestOptions,
): SingleAnswer {
  const { status, body, result } = flagResponse(flag, key, parseJsonBody(request, key), nowMs, options.enrich);
  return { status, json: JSON.stringify(body), result };
}
