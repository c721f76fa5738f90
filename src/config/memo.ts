/**
 * What one load keeps for the next, so that an edit costs what it changes (see
 * docs/architecture-config.md, "How an edit flows"). Everything is keyed by content:
 * - a file's text (a file's by the hash of its bytes) -> its parse (an unchanged file is not parsed again);
 * - a changed file's new value shares every flag, segment and metadata entry that is equal to
 *   the last value's with it (`shareUnchanged`, share.ts), so later stages can tell "unchanged" by identity;
 * - a flag value found valid -> not validated again (a WeakSet: it lives as long as the value);
 * - an environment's documents (by identity) and the variables its notifications name -> the
 *   environment as built last time (problems included), reused whole;
 * - an environment's last compile (engine/compile.ts's CompileMemo): flags whose definition is
 *   the same object and whose segments did not change are not compiled again.
 * Entries not used by a load are dropped at its end: the memo holds one configuration.
 */
import type { CompileMemo } from "../engine/compile.js";
import type { KnownParse } from "./parse.js";

/** The work a load did (for tests and the benchmark: edits must cost what they change). */
export interface WorkCounts {
  /** Files (or URL bodies) parsed; an unchanged text is not parsed again. */
  filesParsed: number;
  /** Characters of those files a reader was given: an edit is read where it changed (reparse.ts). */
  charsParsed: number;
  /** Flag definitions checked against the schema and the rules beside it. */
  flagsValidated: number;
  /** Environments validated, merged and compiled (the others were reused whole). */
  environmentsBuilt: number;
  /** Flags whose targeting was compiled (the others were reused). */
  flagsCompiled: number;
}

const zero = (): WorkCounts => ({ filesParsed: 0, charsParsed: 0, flagsValidated: 0, environmentsBuilt: 0, flagsCompiled: 0 });

/** One generation of keyed entries: what this load used, and what the last one left. */
class Generation<K, V> {
  #last = new Map<K, V>();
  #now = new Map<K, V>();

  get(key: K): V | undefined {
    return this.#now.get(key) ?? this.#last.get(key);
  }

  set(key: K, value: V): void {
    this.#now.set(key, value);
  }

  /** Entries this load did not use are forgotten. */
  end(): void {
    this.#last = this.#now;
    this.#now = new Map();
  }
}

export class LoadMemo {
  /** Work done by the last load. */
  last: WorkCounts = zero();
  #counts: WorkCounts = zero();
  readonly parsed = new Generation<string, KnownParse>();
  readonly environments = new Generation<string, unknown>();
  readonly compiled = new Generation<string, CompileMemo>();
  /** Flag values that passed every document check (schema, variants, finite numbers). */
  readonly validFlags = new WeakSet<object>();

  count(what: keyof WorkCounts, n = 1): void {
    this.#counts[what] += n;
  }

  /** A load is done: its counts become `last`, and what it did not use is dropped. */
  end(): void {
    this.last = this.#counts;
    this.#counts = zero();
    this.parsed.end();
    this.environments.end();
    this.compiled.end();
  }
}
