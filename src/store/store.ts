/**
 * The live registry: the current snapshot of every environment and the index from keys (and
 * stream tokens) to environments. Readers always see one consistent set: `replace` swaps it
 * whole.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Problem } from "../config/types.js";
import type { EnvironmentSnapshot } from "./snapshot.js";

const digest = (secret: string): Buffer => createHash("sha256").update(secret).digest();

interface IndexEntry {
  digest: Buffer;
  env: string;
}

export class FlagStore {
  #environments = new Map<string, EnvironmentSnapshot>();
  #byKey = new Map<string, IndexEntry>();
  #byStreamToken = new Map<string, IndexEntry>();
  #problems = new Map<string, Problem[]>();
  /** Replaced keys still accepted until their grace period ends (`--key-grace`). */
  #retired = new Map<string, IndexEntry & { until: number }>();

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
    const byKey = new Map<string, IndexEntry>();
    const byStreamToken = new Map<string, IndexEntry>();
    for (const snapshot of environments) {
      next.set(snapshot.name, snapshot);
      const keyDigest = digest(snapshot.apiKey);
      byKey.set(keyDigest.toString("hex"), { digest: keyDigest, env: snapshot.name });
      const tokenDigest = digest(snapshot.streamToken);
      byStreamToken.set(tokenDigest.toString("hex"), { digest: tokenDigest, env: snapshot.name });
    }
    this.#environments = next;
    this.#byKey = byKey;
    this.#byStreamToken = byStreamToken;
    this.#problems = new Map(problems);
  }

  /**
   * The environment a key belongs to. The lookup goes through a SHA-256 digest and a
   * constant-time comparison, so response time says nothing about how close a guess was.
   */
  authenticate(key: string): EnvironmentSnapshot | undefined {
    const current = this.#lookup(this.#byKey, key);
    if (current || this.#retired.size === 0) return current;
    const presented = digest(key);
    const retired = this.#retired.get(presented.toString("hex"));
    if (!retired || !timingSafeEqual(retired.digest, presented)) return undefined;
    if (Date.now() >= retired.until) {
      this.#retired.delete(presented.toString("hex"));
      return undefined;
    }
    return this.#environments.get(retired.env);
  }

  /** Keeps accepting a replaced key for `graceMs` (0: revoked at once). */
  retireKey(env: string, key: string, graceMs: number): void {
    if (graceMs <= 0) return;
    const keyDigest = digest(key);
    this.#retired.set(keyDigest.toString("hex"), { digest: keyDigest, env, until: Date.now() + graceMs });
  }

  /** The environment whose OFREP event stream this token opens. */
  authenticateStreamToken(token: string): EnvironmentSnapshot | undefined {
    return this.#lookup(this.#byStreamToken, token);
  }

  #lookup(index: Map<string, IndexEntry>, secret: string): EnvironmentSnapshot | undefined {
    const presented = digest(secret);
    const entry = index.get(presented.toString("hex"));
    if (!entry || !timingSafeEqual(entry.digest, presented)) return undefined;
    return this.#environments.get(entry.env);
  }
}
