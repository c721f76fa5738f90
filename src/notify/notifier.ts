/**
 * From applied changes to messages: per environment, changes are collected for `coalesceMs`
 * after the first one (a burst of saves is one message), folded per flag or segment (first
 * before -> last after, so an edit undone within the window says nothing), then sent to each of
 * the environment's current targets through its `events` filter.
 *
 * Nothing here can slow serving: `onChanges` only records and arms a timer; delivery runs
 * detached, one message at a time per target (so a channel reads in order), with a bounded
 * queue. On `close()` pending windows are sent at once and given `closeTimeoutMs` to arrive;
 * whatever is still in flight or queued then is aborted and logged as dropped.
 */
import { randomUUID } from "node:crypto";
import { answeredFlag } from "../changes/diff.js";
import type { Change } from "../model/change.js";
import type { EnvironmentChange } from "../changes/reload.js";
import type { FlagDefinition, JsonValue, Metadata, NotificationTarget } from "../model/types.js";
import type { Logger } from "../log/logger.js";
import { canonicalJson } from "../model/json.js";
import { deliver, redactUrl, type DeliveryOptions } from "./deliver.js";
import { buildRequest, type NotificationRequest } from "./request.js";
import { describeChange } from "./summary.js";

export interface NotifierOptions {
  logger: Logger;
  /** How long after an environment's first change its message waits for more (default 1000). */
  coalesceMs?: number;
  fetch?: typeof globalThis.fetch;
  /** Timeout, attempts and backoff of each delivery (see deliver.ts for the defaults). */
  delivery?: Pick<DeliveryOptions, "timeoutMs" | "attempts" | "backoffMs" | "maxRetryAfterMs">;
  /** How long `close()` waits for messages to arrive before dropping them (default 2000). */
  closeTimeoutMs?: number;
  /** Messages waiting behind a slow receiver, per target, before new ones are dropped (default 20). */
  maxQueued?: number;
  now?: () => Date;
}

export interface Notifier {
  /** Records changes; returns at once and never throws. */
  onChanges(changes: readonly EnvironmentChange[]): void;
  close(): Promise<void>;
}

/** One flag, segment or key over the window: its state before the first change and after the last. */
type Folded =
  | { kind: "flag"; key: string; before?: FlagDefinition; after?: FlagDefinition }
  | { kind: "segment"; key: string; before?: JsonValue; after?: JsonValue }
  | { kind: "api-key"; before?: string; after?: string };

interface Window {
  timer: NodeJS.Timeout;
  targets: readonly NotificationTarget[];
  folded: Map<string, Folded>;
}

const targetsOf = (change: EnvironmentChange): readonly NotificationTarget[] => (change.after ?? change.before)?.config.notifications ?? [];

/** What a flag answers includes the flag-set metadata (the diff compares this view too). */
const answered = (flag: FlagDefinition | undefined, metadata: Metadata | undefined): FlagDefinition | undefined =>
  flag && answeredFlag(flag, metadata);

/** Flags, then segments, then the key, each by key: the order the diff reports them in. */
const ORDER = { flag: 0, segment: 1, "api-key": 2 } as const;
const byKind = (a: Change, b: Change): number =>
  ORDER[a.kind] - ORDER[b.kind] || (a.kind !== "api-key" && b.kind !== "api-key" ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : 0);

/** The net change over the window, or undefined when there is none. */
function netChange(f: Folded): Change | undefined {
  if (f.kind === "api-key") return f.before !== f.after ? { kind: "api-key", change: "updated" } : undefined;
  if (f.before === undefined && f.after === undefined) return undefined;
  if (f.before !== undefined && f.after !== undefined && canonicalJson(f.before) === canonicalJson(f.after)) return undefined;
  const change = f.before === undefined ? "created" : f.after === undefined ? "deleted" : "updated";
  return f.kind === "flag"
    ? { kind: "flag", key: f.key, change, before: f.before, after: f.after }
    : { kind: "segment", key: f.key, change, before: f.before, after: f.after };
}

export function createNotifier(options: NotifierOptions): Notifier {
  const { logger } = options;
  const coalesceMs = options.coalesceMs ?? 1000;
  const now = options.now ?? (() => new Date());
  const windows = new Map<string, Window>();
  const deliveries = new Deliveries(options);
  let closed = false;

  const record = (change: EnvironmentChange): void => {
    let window = windows.get(change.env);
    if (!window) {
      // Environments without targets cost nothing, unless a window is already open for them.
      if (targetsOf(change).length === 0) return;
      window = { timer: setTimeout(() => flush(change.env), coalesceMs).unref(), targets: [], folded: new Map() };
      windows.set(change.env, window);
    }
    window.targets = targetsOf(change);
    fold(window.folded, change);
  };

  const flush = (env: string): void => {
    const window = windows.get(env);
    if (!window) return;
    windows.delete(env);
    clearTimeout(window.timer);
    try {
      for (const { label, target, request } of messagesOf(env, window, now())) deliveries.send(label, target, request);
    } catch (error) {
      logger.error(`${env}: notification not sent: ${(error as Error).message}`);
    }
  };

  return {
    onChanges(changes) {
      if (closed) return;
      try {
        for (const change of changes) record(change);
      } catch (error) {
        logger.error(`notifications: ${(error as Error).message}`);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const env of [...windows.keys()]) flush(env);
      await deliveries.close(options.closeTimeoutMs ?? 2000);
    },
  };
}

/** Folds one applied change into the window's state per flag, segment and key (first before, latest after). */
function fold(folded: Map<string, Folded>, { before, after, changes }: EnvironmentChange): void {
  for (const c of changes) {
    const id = c.kind === "api-key" ? "api-key" : `${c.kind}:${c.key}`;
    const seen = folded.get(id);
    if (c.kind === "api-key") {
      if (seen?.kind === "api-key") seen.after = after?.apiKey;
      else folded.set(id, { kind: "api-key", before: before?.apiKey, after: after?.apiKey });
    } else if (c.kind === "flag") {
      const latest = answered(c.after, after?.config.metadata);
      if (seen?.kind === "flag") seen.after = latest;
      else folded.set(id, { kind: "flag", key: c.key, before: answered(c.before, before?.config.metadata), after: latest });
    } else if (seen?.kind === "segment") seen.after = c.after;
    else folded.set(id, { kind: "segment", key: c.key, before: c.before, after: c.after });
  }
}

interface Message {
  label: string;
  target: NotificationTarget;
  request: NotificationRequest;
}

/** The window's messages, one per target that wants some of its net changes; none when nothing changed on balance. */
function* messagesOf(env: string, window: Window, timestamp: Date): Generator<Message> {
  const changes = [...window.folded.values()]
    .map(netChange)
    .filter((c) => c !== undefined)
    .sort(byKind);
  if (changes.length === 0) return;
  const summaries = changes.map(describeChange);
  for (const target of window.targets) {
    const request = buildRequest(target, env, summaries, timestamp, randomUUID());
    if (request) yield { label: `${env}: ${target.type} notification to ${redactUrl(target.url)}`, target, request };
  }
}

/** Messages on their way: one at a time per target, in order, at most `maxQueued` waiting; aborted when closing takes too long. */
class Deliveries {
  readonly #queues = new Map<string, { tail: Promise<void>; length: number }>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #shutdown = new AbortController();
  readonly #maxQueued: number;

  constructor(private readonly options: NotifierOptions) {
    this.#maxQueued = options.maxQueued ?? 20;
  }

  /** Queues one message behind the ones already going to the same target. */
  send(label: string, target: NotificationTarget, request: NotificationRequest): void {
    const { logger } = this.options;
    const id = `${target.type} ${target.url}`;
    const queue = this.#queues.get(id) ?? { tail: Promise.resolve(), length: 0 };
    if (queue.length >= this.#maxQueued) {
      logger.error(`${label} dropped: ${queue.length} messages already waiting for this receiver`);
      return;
    }
    queue.length++;
    this.#queues.set(id, queue);
    const signal = this.#shutdown.signal;
    const run = queue.tail.then(async () => {
      if (!signal.aborted) await deliver(request, { ...this.options.delivery, logger, label, fetch: this.options.fetch, signal });
    });
    const done = run
      .catch((error: Error) => logger.error(`${label} failed: ${error.message}`))
      .finally(() => {
        this.#inFlight.delete(done);
        if (--queue.length === 0 && this.#queues.get(id) === queue) this.#queues.delete(id);
      });
    queue.tail = done;
    this.#inFlight.add(done);
  }

  /** Waits up to `timeoutMs` for everything queued to arrive; then aborts the rest (logged as dropped). */
  async close(timeoutMs: number): Promise<void> {
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const settled = Promise.all(this.#inFlight);
    const timedOut = await Promise.race([
      settled.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.options.logger.warn(
        `notifications: ${this.#inFlight.size} message(s) not delivered within ${timeoutMs} ms of shutdown, dropped`,
      );
      this.#shutdown.abort();
      await settled;
    }
  }
}
