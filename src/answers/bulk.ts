/**
 * Evaluate-all answers (see docs/api.md). An answer is a pure function of the environment snapshot,
 * the context and, only where a flag can read `$flagd.timestamp`, the current second. So each
 * snapshot gets a plan (flags that need no evaluation serialized once, the fixed end of the body)
 * and a bounded cache of answers by request body, kept from a request's second time: a request
 * that keeps coming back, a 304 above all, costs a lookup instead of an evaluation. Snapshots are
 * immutable and replaced whole on every reload, so both are keyed by the snapshot object and go
 * away with it.
 */
import { evaluate, evaluatorFor } from "../engine/index.js";
import type { CompiledFlag, Evaluation } from "../engine/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { AnswerCache } from "./answer-cache.js";
import { bulkEtagOf, PART_DIGEST_BYTES, partDigest } from "./etag.js";
import { OutcomeTable } from "./outcome-memo.js";
import { bulkItemJson } from "../evaluation/ofrep-bodies.js";

export interface BulkAnswer {
  /**
   * The JSON body as UTF-8 bytes, built as bytes: no text to join, measure and encode again for
   * the socket (an answer of 100 flags is about 8 KB).
   */
  bytes: Buffer;
  etag: string;
  /**
   * Each flag's evaluation, in key order: counted for /metrics and recorded in sessions, cache
   * hits included. The contract evaluation-counts.ts relies on: an answer served again from the
   * cache (`repeated`) hands out this very array again, and a newly computed answer a new array,
   * never one seen before. So the array's identity stands for the answer's outcomes: counting
   * keeps a tally per array and never looks inside again.
   */
  outcomes: readonly Evaluation[];
  /** Set once the answer is served again from the cache: what is made from it is then worth memoizing. */
  repeated?: true;
}

/** Answers kept per environment, in bytes of request and response bodies (about 500 answers of 100 flags). */
export const DEFAULT_BULK_CACHE_BYTES = 8 * 1024 * 1024;

/** An item of the flags array, encoded once per outcome: its bytes and its part digest (etag.ts). */
class EncodedItem {
  readonly bytes: Buffer;
  /**
   * The digest's bytes as four 32-bit words (in the machine's byte order, read and written
   * alike). Fields of the item rather than a typed array of its own: an answer copies a hundred
   * of them, and each array is two more objects to reach in memory.
   */
  readonly d0: number;
  readonly d1: number;
  readonly d2: number;
  readonly d3: number;
  constructor(outcome: Evaluation) {
    this.bytes = Buffer.from(bulkItemJson(outcome));
    // Copied to a buffer of its own: an Int32Array needs an aligned start.
    const words = new Int32Array(Uint8Array.from(partDigest(this.bytes)).buffer);
    this.d0 = words[0]!;
    this.d1 = words[1]!;
    this.d2 = words[2]!;
    this.d3 = words[3]!;
  }
}

const DIGEST_WORDS = 4;
if (PART_DIGEST_BYTES !== DIGEST_WORDS * 4) throw new Error("EncodedItem holds a part digest of 16 bytes");

interface Plan {
  /** In key order: an item when it is the same for every context, else the flag to evaluate. */
  items: (EncodedItem | CompiledFlag)[];
  /** The evaluations of the items that are the same for every context (by index). */
  fixed: (Evaluation | undefined)[];
  /** Per evaluated item (by index), its encoding by outcome. */
  encoded: OutcomeTable<EncodedItem>;
  /** Each answer's items while it is assembled: computing is synchronous, so one array serves every answer. */
  parts: EncodedItem[];
  /**
   * What the ETag hashes (etag.ts): the tail's digest, one digest per item, the configuration
   * version. Only the items' digests change from answer to answer, written in place as words
   * (`etagWords`): hashing is synchronous, so one buffer serves every answer.
   */
  etagInput: Uint8Array;
  etagWords: Int32Array;
  /** Everything after the flags array. */
  tail: Buffer;
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

/**
 * Requests remembered to keep answers from their second time: eight times as many as the cache
 * holds answers of 100 flags (about 16 KiB each), 4 096 for the default 8 MiB.
 */
const seenRequestsFor = (cacheBytes: number): number => Math.ceil(cacheBytes / 2048);

const HEAD = Buffer.from('{"flags":[');
const COMMA = 0x2c;

/** The ETag's input for a plan (see Plan.etagInput), the items' digests left to each answer. */
function etagInputFor(tail: Buffer, items: number, configEtag: string): { etagInput: Uint8Array; etagWords: Int32Array } {
  const version = Buffer.from(configEtag);
  const digests = PART_DIGEST_BYTES * (1 + items);
  // A buffer of its own: the words' view needs an aligned start.
  const etagInput = new Uint8Array(new ArrayBuffer(digests + version.length));
  etagInput.set(partDigest(tail), 0);
  etagInput.set(version, digests);
  return { etagInput, etagWords: new Int32Array(etagInput.buffer, 0, digests / 4) };
}

function planFor(snapshot: EnvironmentSnapshot, options: BulkOptions): Plan {
  const fixed: (Evaluation | undefined)[] = [];
  const items = snapshot.flagKeys.map((key, i) => {
    const flag = snapshot.flags.get(key)!;
    // Disabled flags and flags without targeting answer the same whatever the context and time.
    if (flag.state !== "DISABLED" && flag.rule) return flag;
    return new EncodedItem((fixed[i] = evaluate(flag, {}, 0)));
  });
  // An `endpoint` without `origin`: the client resolves it against the origin it called, so
  // nothing here depends on the request's Host header (which any client can set).
  const eventStreams = options.eventStreamPath
    ? [{ type: "sse", endpoint: { requestUri: options.eventStreamPath(snapshot) }, inactivityDelaySec: 120 }]
    : undefined;
  const tail = Buffer.from(
    `],"metadata":${JSON.stringify(snapshot.config.metadata)}${eventStreams ? `,"eventStreams":${JSON.stringify(eventStreams)}` : ""}}`,
  );
  const readsClock = items.some((item) => !(item instanceof EncodedItem) && !item.clockFree);
  // An answer's bytes, and an outcome held by an answer counts as about 64 bytes beside them.
  // Kept from a request's second time: contexts that never come back (one per user) would
  // otherwise each take an answer of kilobytes into the cache and the old generation of the heap.
  const cacheBytes = options.cacheBytes ?? DEFAULT_BULK_CACHE_BYTES;
  const cache = new AnswerCache<BulkAnswer>(
    cacheBytes,
    (answer) => answer.bytes.length + 64 * answer.outcomes.length,
    seenRequestsFor(cacheBytes),
  );
  return {
    items,
    fixed,
    encoded: new OutcomeTable(items.length),
    parts: new Array<EncodedItem>(items.length),
    ...etagInputFor(tail, items.length, snapshot.configEtag),
    tail,
    readsClock,
    cache,
  };
}

function compute(plan: Plan, context: Record<string, unknown>, nowMs: number): BulkAnswer {
  const evaluate = evaluatorFor(context, nowMs);
  const { items, etagWords, parts } = plan;
  const outcomes: Evaluation[] = new Array(items.length);
  let length = HEAD.length + Math.max(0, items.length - 1) + plan.tail.length;
  let word = DIGEST_WORDS; // after the tail's digest
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    let part: EncodedItem;
    if (item instanceof EncodedItem) {
      part = item;
      outcomes[i] = plan.fixed[i]!;
    } else {
      const outcome = (outcomes[i] = evaluate(item));
      const known = plan.encoded.get(i, outcome);
      if (known === undefined) plan.encoded.remember(i, outcome, (part = new EncodedItem(outcome)));
      else part = known;
    }
    parts[i] = part;
    length += part.bytes.length;
    etagWords[word] = part.d0;
    etagWords[word + 1] = part.d1;
    etagWords[word + 2] = part.d2;
    etagWords[word + 3] = part.d3;
    word += DIGEST_WORDS;
  }
  // Not from Node's shared pool: a kept answer would hold on to the whole pool slab.
  const body = Buffer.allocUnsafeSlow(length);
  let at = HEAD.copy(body, 0);
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) body[at++] = COMMA;
    body.set(parts[i]!.bytes, at);
    at += parts[i]!.bytes.length;
  }
  plan.tail.copy(body, at);
  return { bytes: body, etag: bulkEtagOf(plan.etagInput), outcomes };
}

/**
 * The evaluate-all answerer: `(snapshot, scope, request body, context reader, now)` -> body and
 * ETag. The scope is whatever else than the body the context depends on ("" when nothing: see
 * fixture/enrich.ts). `contextOf(body)` is only called on a miss, so it may throw the request's
 * 400. `now` is the time evaluations read: the clock when absent, read only when a flag needs it.
 */
export function createBulkAnswers(options: BulkOptions = {}) {
  // After a reload, the last snapshot's plan (and its answers) goes at the next request.
  const plans = new WeakMap<EnvironmentSnapshot, Plan>();
  return (
    snapshot: EnvironmentSnapshot,
    scope: string,
    request: string,
    contextOf: (request: string) => Record<string, unknown>,
    nowMs?: number,
  ): BulkAnswer => {
    let plan = plans.get(snapshot);
    if (!plan) plans.set(snapshot, (plan = planFor(snapshot, options)));
    const second = plan.readsClock ? Math.floor((nowMs ??= Date.now()) / 1000) : 0;
    const cached = plan.cache.get(scope, request, second);
    if (cached !== undefined) {
      cached.repeated = true;
      return cached;
    }
    const answer = compute(plan, contextOf(request), nowMs ?? Date.now());
    plan.cache.set(scope, request, second, answer);
    return answer;
  };
}
