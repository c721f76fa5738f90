/**
 * The live registry: every environment's current snapshot, and the index from keys (and stream
 * tokens) to them. Readers always see one consistent set: `replace` swaps it whole.
 */
import type { Problem } from "../model/types.js";
import { keyDigest } from "./keys.js";
import type { EnvironmentSnapshot } from "./snapshot.js";

/** One grace of a replaced key, as `retireKey` started it: what its timer ends (`endRetirement`). */
export interface Retirement {
  readonly digest: string;
  readonly env: string;
  readonly until: number;
}

export class FlagStore {
  #environments = new Map<string, EnvironmentSnapshot>();
  /** Key digest -> the snapshot it opens (see keyDigest). */
  #byKey = new Map<string, EnvironmentSnapshot>();
  #byStreamToken = new Map<string, EnvironmentSnapshot>();
  #problems = new Map<string, Problem[]>();
  /** Replaced keys still accepted until their grace period ends (`--key-grace`), by digest. */
  #retired = new Map<string, Retirement>();
  #listeners = new Set<() => void>();
  /**
   * Current keys as presented, once accepted: saves the digest on every request. At most one
   * entry per environment (only the exact key has its digest); emptied by every `replace`.
   */
  #accepted = new Map<string, EnvironmentSnapshot>();

  get environments(): ReadonlyMap<string, EnvironmentSnapshot> {
    return this.#environments;
  }

  /** The problems of the last load, by environment ("" for problems not tied to one). */
  get problems(): ReadonlyMap<string, Problem[]> {
    return this.#problems;
  }

  get(name: string): EnvironmentSnapshot | undefined {
    return this.#environments.get(name);
  }

  /** Installs a new set of snapshots and the problems found while loading them. */
  replace(environments: Iterable<EnvironmentSnapshot>, problems: ReadonlyMap<string, Problem[]> = new Map()): void {
    const next = new Map<string, EnvironmentSnapshot>();
    const byKey = new Map<string, EnvironmentSnapshot>();
    const byStreamToken = new Map<string, EnvironmentSnapshot>();
    for (const snapshot of environments) {
      next.set(snapshot.name, snapshot);
      byKey.set(keyDigest(snapshot.apiKey), snapshot);
      byStreamToken.set(keyDigest(snapshot.streamToken), snapshot);
    }
    // A replaced key made current again is no longer in a grace: nothing may end it as a retired key.
    for (const digest of byKey.keys()) this.#retired.delete(digest);
    this.#environments = next;
    this.#byKey = byKey;
    this.#byStreamToken = byStreamToken;
    this.#accepted = new Map();
    this.#problems = new Map(problems);
    for (const listener of this.#listeners) listener();
  }

  /** Called after every `replace` (the dashboard's stream); returns the function that stops it. */
  onReplace(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The environment a key belongs to. Keys are looked up by their SHA-256 digest, so response
   * time says nothing about how close a guess was. (The map of accepted keys compares string
   * hashes before any characters, so it tells no more: a guess's hash matches by chance alone.)
   */
  authenticate(key: string): EnvironmentSnapshot | undefined {
    const accepted = this.#accepted.get(key);
    if (accepted) return accepted;
    const digest = keyDigest(key);
    const current = this.#byKey.get(digest);
    if (current) {
      this.#accepted.set(key, current);
      return current;
    }
    const retired = this.#retired.get(digest);
    if (!retired) return undefined;
    if (Date.now() >= retired.until) {
      this.#retired.delete(digest);
      return undefined;
    }
    return this.#environments.get(retired.env);
  }

  /** Ends the grace of every replaced key of `env` at once; returns their digests. */
  revokeRetired(env: string): string[] {
    const now = Date.now();
    const revoked: string[] = [];
    for (const [digest, r] of this.#retired) {
      if (r.env !== env) continue;
      this.#retired.delete(digest); // deleting the current entry is safe while iterating a Map
      if (now < r.until) revoked.push(digest);
    }
    return revoked;
  }

  /**
   * Ends this grace, whenever it was due to end; false when it is no longer the key's (the key is
   * current again, was retired again by a later rotation, or was revoked already).
   */
  endRetirement(retirement: Retirement): boolean {
    if (this.#retired.get(retirement.digest) !== retirement) return false;
    this.#retired.delete(retirement.digest);
    return true;
  }

  /** Keeps accepting a replaced key for `graceMs`; undefined when there is no grace (revoked at once). */
  retireKey(env: string, key: string, graceMs: number): Retirement | undefined {
    if (graceMs <= 0) return undefined;
    const retirement = { digest: keyDigest(key), env, until: Date.now() + graceMs };
    this.#retired.set(retirement.digest, retirement);
    return retirement;
  }

  /** The environment whose OFREP event stream this token opens. */
  authenticateStreamToken(token: string): EnvironmentSnapshot | undefined {
    return this.#byStreamToken.get(keyDigest(token));
  }
}
