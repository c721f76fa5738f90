/**
 * The open flagd streams (EventStream and SyncFlags), by environment: what the store tells when
 * it is replaced (a reload, an override, a flag newly broken: every change a client could see),
 * what a `drop` fault rule closes, and what /metrics counts. The server's parts hold one whether
 * or not `--flagd-port` is set (it is empty then).
 */
import type { Code } from "@connectrpc/connect";
import type { EnvironmentSnapshot } from "../store/snapshot.js";

/**
 * gRPC's (and Connect's) UNAVAILABLE, written out: every server loads this module, and only one
 * with `--flagd-port` loads Connect.
 */
const UNAVAILABLE = 14 as Code;

export type FlagdStreamRoute = "flagd-events" | "flagd-sync";

export interface FlagdStream {
  readonly route: FlagdStreamRoute;
  /** The client's address (without its port). */
  readonly ip: string;
  /** The environment it reads; undefined for an EventStream not yet bound to one (see services.ts). */
  readonly env: string | undefined;
  /**
   * Its environment's snapshot after a replace of the store (undefined: removed), maybe the same
   * as before, or after a key was revoked: the stream ends if its selector no longer selects it.
   */
  replaced(snapshot: EnvironmentSnapshot | undefined): void;
  /** Ends the call with a status. */
  end(code: Code, details: string): void;
}

export class FlagdStreams {
  #open = new Set<FlagdStream>();

  add(stream: FlagdStream): () => void {
    this.#open.add(stream);
    return () => void this.#open.delete(stream);
  }

  /** Open streams from one client address (`--max-streams-per-ip` counts them with the HTTP streams' rule). */
  from(ip: string): number {
    let n = 0;
    for (const stream of this.#open) if (stream.ip === ip) n++;
    return n;
  }

  get size(): number {
    return this.#open.size;
  }

  /**
   * Tells every stream bound to an environment what the store now serves for it: after every
   * replace of the store, and when replaced keys stop working (their grace ended, or `keys revoke`
   * ended it): a stream opened with a revoked key ends.
   */
  replaced(environments: ReadonlyMap<string, EnvironmentSnapshot>): void {
    for (const stream of [...this.#open]) if (stream.env !== undefined) stream.replaced(environments.get(stream.env));
  }

  /** A `drop` fault rule: ends the route's streams (of one environment, or all) that `pick` chooses; returns how many. */
  drop(route: FlagdStreamRoute, env: string | undefined, pick: () => boolean): number {
    let dropped = 0;
    for (const stream of [...this.#open]) {
      if (stream.route !== route || (env !== undefined && stream.env !== env) || !pick()) continue;
      stream.end(UNAVAILABLE, `injected fault: ${route} dropped`);
      dropped++;
    }
    return dropped;
  }

  /** Shutdown: every stream ends, as flagd's do when it stops. */
  close(): void {
    for (const stream of [...this.#open]) stream.end(UNAVAILABLE, "the server is shutting down");
  }
}
