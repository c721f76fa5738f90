/**
 * The dashboard's live feed (`GET /api/v1/admin/events`): one stream for all environments.
 * `change` events name what each applied reload or override changed; `status` events carry the
 * current problems whenever they change (a failing reload, and its fix).
 */
import type { EnvironmentChange } from "../changes/reload.js";
import { formatProblem } from "../model/types.js";
import { Channel } from "../events/channel.js";
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
  const pick = (kind: "flag" | "segment") =>
    change.changes.flatMap((c) => (c.kind === kind ? [{ key: c.key, change: c.change }] : []));
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

  /** Current problems, by environment ("" for problems not tied to one). */
  problems(): Record<string, string[]> {
    return problemsOf(this.store);
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
    this.channel.publish([{ name: "status", data: JSON.stringify({ problems, timestamp: new Date().toISOString() }) }]);
  }

  close(): void {
    clearInterval(this.#heartbeat);
    this.#stopWatching();
    this.channel.closeWhere(() => true);
  }
}
