/**
 * Every environment's two streams — the primary change stream (`/api/v1/flags/events`) and the
 * OFREP stream (`refetchEvaluation`) — with their heartbeats, and the per-address stream count.
 */
import type { Change } from "../model/change.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { Channel, type Subscriber } from "./channel.js";
import { DEFAULT_HEARTBEAT_SECONDS, HEARTBEAT, eventsFor, refetchEvent, type EventSet } from "./encode.js";

export type StreamKind = "events" | "ofrep";

export interface HubOptions {
  eventSet?: EventSet;
  heartbeatSeconds?: number;
  replayLimit?: number;
}

export class EventHub {
  readonly eventSet: EventSet;
  readonly heartbeatSeconds: number;
  #channels = new Map<string, Record<StreamKind, Channel>>();
  #streamsPerIp = new Map<string, number>();
  #heartbeat: NodeJS.Timeout;
  #replayLimit: number;

  constructor(options: HubOptions = {}) {
    this.eventSet = options.eventSet ?? "primary";
    this.heartbeatSeconds = options.heartbeatSeconds ?? DEFAULT_HEARTBEAT_SECONDS[this.eventSet];
    this.#replayLimit = options.replayLimit ?? 500;
    // One timer for all clients; the heartbeat text is the same for everyone.
    this.#heartbeat = setInterval(() => {
      for (const channels of this.#channels.values()) {
        channels.events.broadcast(HEARTBEAT);
        channels.ofrep.broadcast(": heartbeat\n\n");
      }
    }, this.heartbeatSeconds * 1000);
    this.#heartbeat.unref();
  }

  channel(env: string, kind: StreamKind): Channel {
    let channels = this.#channels.get(env);
    if (!channels) {
      channels = { events: new Channel(this.#replayLimit), ofrep: new Channel(this.#replayLimit) };
      this.#channels.set(env, channels);
    }
    return channels[kind];
  }

  /** Adds a client to an environment's stream; returns the function that removes it. */
  subscribe(env: string, kind: StreamKind, subscriber: Subscriber, lastEventId?: number): () => void {
    return this.channel(env, kind).subscribe(subscriber, lastEventId);
  }

  /**
   * Counts one open stream against a client address, until `releaseAddress`. Held for as long as
   * the connection lives, not the subscription: a stream dropped for falling behind still
   * occupies a socket until that socket has closed.
   */
  holdAddress(ip: string): void {
    this.#streamsPerIp.set(ip, (this.#streamsPerIp.get(ip) ?? 0) + 1);
  }

  /** Counts one stream fewer against the address (once per `holdAddress`: the caller sees to it). */
  releaseAddress(ip: string): void {
    const left = (this.#streamsPerIp.get(ip) ?? 1) - 1;
    if (left > 0) this.#streamsPerIp.set(ip, left);
    else this.#streamsPerIp.delete(ip);
  }

  streamsFrom(ip: string): number {
    return this.#streamsPerIp.get(ip) ?? 0;
  }

  get streamCount(): number {
    let n = 0;
    for (const channels of this.#channels.values()) n += channels.events.subscribers.size + channels.ofrep.subscribers.size;
    return n;
  }

  /** Open streams by environment and kind, for /metrics. */
  streamCounts(): { env: string; kind: StreamKind; count: number }[] {
    const counts: { env: string; kind: StreamKind; count: number }[] = [];
    for (const [env, channels] of this.#channels) {
      for (const kind of ["events", "ofrep"] as const) counts.push({ env, kind, count: channels[kind].subscribers.size });
    }
    return counts;
  }

  /** Ends open streams of one kind, in one environment or all, those `pick` chooses; returns how many. */
  dropStreams(kind: StreamKind, env: string | undefined, pick: () => boolean): number {
    let closed = 0;
    for (const [name, channels] of this.#channels) if (env === undefined || env === name) closed += channels[kind].closeWhere(pick);
    return closed;
  }

  /**
   * Announces one reload's changes of an environment on both of its streams; `keyValidUntil`
   * is when a replaced key stops working (default: now).
   */
  publish(snapshot: EnvironmentSnapshot, changes: readonly Change[], at = new Date(), keyValidUntil = at): void {
    if (changes.length === 0) return;
    this.channel(snapshot.name, "events").publish(eventsFor(changes, this.eventSet, at.toISOString(), keyValidUntil.toISOString()));
    this.channel(snapshot.name, "ofrep").publish([{ data: refetchEvent(snapshot.configEtag, snapshot.loadedAt) }]);
  }

  /** Ends the streams of an environment opened with any key but `keepDigest` (all when absent). */
  closeStreams(env: string, keepDigest?: string): number {
    const channels = this.#channels.get(env);
    if (!channels) return 0;
    const stale = (s: Subscriber) => s.keyDigest !== keepDigest;
    return channels.events.closeWhere(stale) + channels.ofrep.closeWhere(stale);
  }

  /** Ends the streams of an environment opened with the key whose digest is given. */
  closeStreamsOf(env: string, digest: string): number {
    const channels = this.#channels.get(env);
    if (!channels) return 0;
    const opened = (s: Subscriber) => s.keyDigest === digest;
    return channels.events.closeWhere(opened) + channels.ofrep.closeWhere(opened);
  }

  /** An environment that went away: its streams end and its replay buffer is dropped. */
  removeEnvironment(env: string): void {
    this.closeStreams(env);
    this.#channels.delete(env);
  }

  close(): void {
    clearInterval(this.#heartbeat);
    for (const env of [...this.#channels.keys()]) this.removeEnvironment(env);
  }
}
