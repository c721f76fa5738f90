/**
 * Single-flag answers (`POST /ofrep/v1/evaluate/flags/{key}`), computed once per (snapshot, flag,
 * request body) and kept in a bounded cache per snapshot, like evaluate-all's (see bulk.ts): an
 * answer is a pure function of the flag, the context and, only for a flag that can read
 * `$flagd.timestamp`, the current second. Errors thrown (invalid JSON or context, unknown flag)
 * are never kept.
 */
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { AnswerCache } from "./answer-cache.js";
import { parseJsonBody } from "./body.js";
import { evaluateSingle } from "./shape.js";

export interface SingleAnswer {
  status: 200 | 400;
  json: string;
}

/** Answers kept per environment, in bytes of request and response bodies. */
export const DEFAULT_SINGLE_CACHE_BYTES = 2 * 1024 * 1024;

export function createSingleAnswers(cacheBytes = DEFAULT_SINGLE_CACHE_BYTES) {
  const caches = new WeakMap<EnvironmentSnapshot, AnswerCache<SingleAnswer>>();
  return (snapshot: EnvironmentSnapshot, key: string, request: string, nowMs = Date.now()): SingleAnswer => {
    const compute = (): SingleAnswer => {
      const { status, body } = evaluateSingle(snapshot.flags, key, parseJsonBody(request, key), nowMs);
      return { status, json: JSON.stringify(body) };
    };
    const flag = snapshot.flags.get(key);
    if (!flag) return compute(); // the request's 400 or the 404, in that order
    let cache = caches.get(snapshot);
    if (!cache) caches.set(snapshot, (cache = new AnswerCache<SingleAnswer>(cacheBytes, (answer) => answer.json.length)));
    const second = flag.clockFree ? 0 : Math.floor(nowMs / 1000);
    // Length-prefixed: no flag key and body pair can spell another's.
    return cache.answer(`${key.length}:${key}${request}`, second, compute);
  };
}
