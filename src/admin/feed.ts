/**
 * The dashboard's live feed (`GET /api/v1/admin/events`): one stream for all environments.
 * `change` events name what each applied reload or override changed; `status` events carry the
 * current problems whenever they change (a failing reload, and its fix). With `?session=ID`, the
 * same stream also carries that session's evaluations as they are recorded (followSession).
 */
import type { EnvironmentChange } from "../changes/reload.js";
import { formatProblem } from "../model/types.js";
import { Channel } from "../events/channel.js";
import { encodeEvent, type SseEvent } from "../events/encode.js";
import { shareContexts, type RecordedEvaluation, type SessionStore } from "../fixture/sessions.js";
import type { FlagStore } from "../store/store.js";

export const ADMIN_HEARTBEAT_SECONDS = 15;

export interface ChangeSummary {
  environment: string;
  /** added / removed: the environment itself; updated: some of its flags, segments or key. */
  change: "added" | "removed" | "updated";
  flags: { key: string; change: string }[];
  segments: { key: string; change: string }[];
  keyRotated: boolean;
  timestamp: string;
}

export function summarize(change: EnvironmentChange, at: Date): ChangeSummary {
  const pick = (kind: "flag" | "segment") => change.changes.flatMap((c) => (c.kind === kind ? [{ key: c.key, change: c.change }] : []));
  return {
    environment: change.env,
    change: !change.after ? "removed" : !change.before ? "added" : "updated",
    flags: pick("flag"),
    segments: pick("segment"),
    keyRotated: change.changes.some((c) => c.kind === "api-key"),
    timestamp: at.toISOString(),
  };
}

const problemsOf = (store: FlagStore): Record<string, string[]> =>
  Object.fromEntries([...store.problems].map(([env, list]) => [env, list.map(formatProblem)]));

/** The `status` event: the problems by environment ("" for problems not tied to one), and when. */
const statusEvent = (problems: Record<string, string[]>, at: Date): SseEvent => ({
  name: "status",
  data: JSON.stringify({ problems, timestamp: at.toISOString() }),
});

export class AdminFeed {
  readonly channel = new Channel(200);
  #lastProblems: string;
  #stopWatching: () => void;
  #heartbeat: NodeJS.Timeout;

  constructor(private readonly store: FlagStore) {
    this.#lastProblems = JSON.stringify(problemsOf(store));
    this.#stopWatching = store.onReplace(() => this.#checkProblems());
    this.#heartbeat = setInterval(() => this.channel.broadcast(": heartbeat\n\n"), ADMIN_HEARTBEAT_SECONDS * 1000);
    this.#heartbeat.unref();
  }

  /** The `status` event for now: what a new connection starts from, before the channel's events. */
  status(): SseEvent {
    return statusEvent(problemsOf(this.store), new Date());
  }

  onChanges(changes: readonly EnvironmentChange[]): void {
    const at = new Date();
    this.channel.publish(changes.map((c) => ({ name: "change", data: JSON.stringify(summarize(c, at)) })));
  }

  #checkProblems(): void {
    const problems = problemsOf(this.store);
    const text = JSON.stringify(problems);
    if (text === this.#lastProblems) return;
    this.#lastProblems = text;
    this.channel.publish([statusEvent(problems, new Date())]);
  }

  close(): void {
    clearInterval(this.#heartbeat);
    this.#stopWatching();
    this.channel.closeWhere(() => true);
  }
}

/** The most evaluations one event of a session feed carries (the newest); a page shows no more. */
export const SESSION_FEED_LIMIT = 100;

const sessionEvent = (name: string, id: string, entries: readonly RecordedEvaluation[], dropped = 0, evicted?: string): string => {
  const shown = entries.slice(-SESSION_FEED_LIMIT);
  const data = { id, ...shareContexts(shown), skipped: dropped + entries.length - shown.length, ...(evicted !== undefined && { evicted }) };
  return encodeEvent({ name, data: JSON.stringify(data) });
};

/**
 * Session `id` for one page: what it holds now (`session`, again when it is deleted), then
 * what is recorded from then on (`evaluations`), gathered per event-loop turn so a bulk evaluation is one event, not one per
 * flag, and the recording request pays only an array push. Each event carries its entries'
 * contexts once (`contexts`, by the entries' `contextId`); `skipped` counts the entries an
 * event leaves out (older than the newest SESSION_FEED_LIMIT, or dropped from the session);
 * `evicted` says why an evicted session holds nothing.
 * Returns the function that stops it.
 */
export function followSession(sessions: SessionStore, id: string, send: (text: string) => void): () => void {
  const { evaluations, dropped, evicted } = sessions.get(id);
  send(sessionEvent("session", id, evaluations, dropped, evicted));
  let pending: RecordedEvaluation[] = [];
  let flushing: NodeJS.Immediate | undefined;
  const flush = () => {
    flushing = undefined;
    const batch = pending;
    pending = [];
    if (batch.length > 0) send(sessionEvent("evaluations", id, batch));
  };
  const stop = sessions.watch(
    id,
    (entry) => {
      pending.push(entry);
      flushing ??= setImmediate(flush);
    },
    // Deleted: the page starts over from an empty session (entries not yet sent went with it).
    () => {
      pending = [];
      send(sessionEvent("session", id, []));
    },
  );
  return () => {
    stop();
    if (flushing) clearImmediate(flushing);
  };
}
