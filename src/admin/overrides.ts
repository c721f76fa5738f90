/**
 * The overrides layer: per environment, flags forced to one variant or state, applied between
 * the loaded configuration and the snapshot (files -> config -> overrides -> snapshot -> diff ->
 * events). Every load passes through `apply`, so overrides survive reloads, and an override whose
 * flag or variant an edit removed is dropped there (and logged). With a file they are kept as
 * YAML across restarts.
 */
import { access, constants, open, readFile, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { LoadedEnvironment } from "../config/index.js";
import { yaml } from "../config/yaml-package.js";
import type { FlagDefinition, FlagState } from "../model/types.js";
import { isRecord } from "../model/json.js";
import type { CompiledFlag } from "../engine/types.js";
import type { Logger } from "../log/logger.js";
import { writeFileDurable } from "../store/durable-write.js";
import { realPathOf, sourceHolding } from "../store/source-holding.js";
import { AdminError } from "./errors.js";

export type Override = { variant: string } | { state: FlagState };

/** The `--overrides` file cannot be read or is not an overrides file: the server does not start. */
export class OverridesFileError extends Error {}

/**
 * Refuses an overrides file the server could not keep: one that is, or lies inside, a served
 * source (the server rewrites it whole, and the watcher would read it as flags), or one it
 * cannot write (every change would be lost on restart).
 */
export async function checkOverridesFile(file: string, servedPaths: readonly string[]): Promise<void> {
  const holding = await sourceHolding(file, servedPaths);
  if (holding) {
    throw new OverridesFileError(
      `--overrides ${file}: ${holding.itself ? "is" : "lies inside"} the served source ${holding.source}; the server rewrites this file whole, so keep it outside what is served (e.g. beside the flags directory)`,
    );
  }
  try {
    await probeWritable(await realPathOf(file));
  } catch (error) {
    const cause = (error as NodeJS.ErrnoException).code ?? "error";
    throw new OverridesFileError(
      `--overrides ${file}: cannot be written (${cause}: ${(error as Error).message}); overrides would be lost on restart`,
    );
  }
}

/** Throws unless the file can be written where it is: the file itself (if any), and a new file beside it (the rename's). */
async function probeWritable(path: string): Promise<void> {
  await access(path, constants.W_OK).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
  const probe = join(dirname(path), `.${basename(path)}.${process.pid}.probe`);
  await (await open(probe, "wx")).close();
  await unlink(probe);
}

/** Environment -> flag key -> override. */
export type OverrideList = Record<string, Record<string, Override>>;

/** `{"variant":"NAME"}` or `{"state":"ENABLED"|"DISABLED"}`; otherwise why not. */
export function parseOverride(value: unknown): Override | string {
  if (!isRecord(value)) return 'expected a JSON object: {"variant":"NAME"} or {"state":"DISABLED"}';
  const keys = Object.keys(value);
  if (keys.length === 1 && typeof value.variant === "string" && value.variant !== "") return { variant: value.variant };
  if (keys.length === 1 && (value.state === "ENABLED" || value.state === "DISABLED")) return { state: value.state };
  return `expected exactly one of "variant" (a variant name) or "state" ("ENABLED" or "DISABLED"), got ${JSON.stringify(value)}`;
}

/** Why an override no longer fits the flag's definition, if it does not. */
export function staleReason(def: FlagDefinition | undefined, override: Override): string | undefined {
  if (!def) return "the flag is no longer defined";
  if ("variant" in override && !Object.hasOwn(def.variants, override.variant)) return `variant ${override.variant} is no longer defined`;
  return undefined;
}

/** A flag as the override makes it answer: a variant override bypasses targeting. */
function overridden(def: FlagDefinition, flag: CompiledFlag, override: Override): [FlagDefinition, CompiledFlag] {
  if ("state" in override) return [{ ...def, state: override.state }, Object.freeze({ ...flag, state: override.state })];
  const { targeting: _targeting, ...rest } = def;
  const { rule: _rule, ...compiled } = flag;
  return [
    { ...rest, state: "ENABLED", defaultVariant: override.variant },
    Object.freeze({ ...compiled, state: "ENABLED" as const, defaultVariant: override.variant }),
  ];
}

export class OverrideLayer {
  /** The overrides as written (to the file, when there is one): what the next apply serves. */
  #overrides = new Map<string, Map<string, Override>>();
  /** Per environment, the overrides of its last apply: what the store serves, and what the list shows. */
  #served = new Map<string, Map<string, Override>>();
  #base = new Map<string, LoadedEnvironment>();
  /** Environment -> broken flag -> its last good file definition, compiled (served meanwhile). */
  #lastGood = new Map<string, Record<string, { def: FlagDefinition; flag: CompiledFlag }>>();
  #writing: Promise<void> = Promise.resolve();

  constructor(private readonly options: { logger: Logger; file?: string }) {}

  /** Reads the overrides file, if there is one (a missing file is an empty list). */
  async load(): Promise<void> {
    const { file } = this.options;
    if (!file) return;
    let parsed: unknown;
    try {
      parsed = yaml().parse(await readFile(file, "utf8")) ?? {};
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new OverridesFileError(`--overrides ${file}: ${(error as Error).message.split("\n")[0]}`);
    }
    const environments = isRecord(parsed) ? (parsed.environments ?? {}) : undefined;
    if (!isRecord(environments))
      throw new OverridesFileError(`--overrides ${file}: expected "environments:" mapping environment names to flag overrides`);
    for (const [env, flags] of Object.entries(environments)) {
      for (const [key, value] of Object.entries(isRecord(flags) ? flags : {})) {
        const override = parseOverride(value);
        if (typeof override === "string") this.options.logger.warn(`${file}: ${env}/${key} ignored: ${override}`);
        else setIn(this.#overrides, env, key, override);
      }
    }
  }

  /**
   * The hook every load goes through: remembers the file definition, returns it overridden.
   * A flag whose new definition is broken is served (and overridden) as its last good one. The
   * caller swaps the result in without waiting: from here on the list shows these overrides.
   */
  readonly apply = (loaded: LoadedEnvironment): LoadedEnvironment => {
    const layered = this.#layer(loaded);
    this.#served.set(loaded.config.name, new Map(this.#overrides.get(loaded.config.name)));
    return layered;
  };

  /**
   * The environment left the configuration (told as the store stops serving it): what the layer
   * knew of it goes. Its overrides are kept, listed from the file's list, for when it comes back.
   */
  readonly remove = (env: string): void => {
    this.#served.delete(env);
    this.#base.delete(env);
    this.#lastGood.delete(env);
  };

  #layer(loaded: LoadedEnvironment): LoadedEnvironment {
    const name = loaded.config.name;
    this.#rememberLastGood(name, loaded);
    this.#base.set(name, loaded);
    const kept = Object.entries(this.#lastGood.get(name) ?? {});
    const overrides = this.#overrides.get(name);
    if (kept.length === 0 && (!overrides || overrides.size === 0)) return loaded;
    const definitions = { ...loaded.config.flags };
    const flags = new Map(loaded.flags);
    const { invalidFlags, ...config } = loaded.config;
    const broken = { ...invalidFlags };
    for (const [key, good] of kept) {
      definitions[key] = good.def;
      flags.set(key, good.flag);
      delete broken[key];
    }
    const dropped: string[] = [];
    for (const [key, override] of [...(overrides ?? [])]) {
      const def = Object.hasOwn(definitions, key) ? definitions[key] : undefined;
      const flag = flags.get(key);
      if (!def && Object.hasOwn(broken, key)) continue; // broken, never good: kept until fixed
      const stale = staleReason(def, override);
      if (stale || !def || !flag) {
        overrides!.delete(key);
        this.options.logger.warn(`${name}: override of ${key} dropped: ${stale ?? "the flag is no longer defined"}`);
        dropped.push(key);
        continue;
      }
      const [nextDef, nextFlag] = overridden(def, flag, override);
      definitions[key] = nextDef;
      flags.set(key, nextFlag);
    }
    if (dropped.length > 0) void this.#drop(name, dropped);
    return { config: { ...config, flags: definitions, ...(Object.keys(broken).length > 0 && { invalidFlags: broken }) }, flags };
  }

  /** The environment as its files define it (no overrides), as of the last load. */
  base(env: string): LoadedEnvironment | undefined {
    return this.#base.get(env);
  }

  /** The last good file definition of a flag whose current one is broken. */
  lastGood(env: string, key: string): FlagDefinition | undefined {
    return this.#lastGood.get(env)?.[key]?.def;
  }

  #rememberLastGood(env: string, loaded: LoadedEnvironment): void {
    const previous = this.#base.get(env);
    const before = this.#lastGood.get(env) ?? {};
    const kept: Record<string, { def: FlagDefinition; flag: CompiledFlag }> = {};
    for (const key of Object.keys(loaded.config.invalidFlags ?? {})) {
      const def = previous && Object.hasOwn(previous.config.flags, key) ? previous.config.flags[key] : undefined;
      const flag = previous?.flags.get(key);
      if (def && flag) kept[key] = { def, flag };
      else if (before[key]) kept[key] = before[key];
    }
    this.#lastGood.set(env, kept);
  }

  /** An override the store serves; of an environment not served (not loaded yet, or removed), one kept for it. */
  get(env: string, key: string): Override | undefined {
    return (this.#served.get(env) ?? this.#overrides.get(env))?.get(key);
  }

  /** Overrides are kept for the environment (served or not). */
  keeps(env: string): boolean {
    return (this.#overrides.get(env)?.size ?? 0) > 0;
  }

  list(): OverrideList {
    return listOf(new Map([...this.#overrides, ...this.#served]));
  }

  /** Sets an override once it is on disk (with a file); a failed write changes nothing (AdminError 500). */
  set(env: string, key: string, override: Override): Promise<void> {
    return this.#change((next) => setIn(next, env, key, override));
  }

  /** Removes one override, or all of an environment's, once that is on disk; resolves to the flag keys that had one. */
  clear(env: string, key?: string): Promise<string[]> {
    let removed: string[] = [];
    return this.#change((next) => {
      const flags = next.get(env);
      removed = !flags ? [] : key === undefined ? [...flags.keys()] : flags.has(key) ? [key] : [];
      for (const k of removed) flags!.delete(k);
      return removed.length > 0;
    }).then(() => removed.sort());
  }

  /**
   * Applies `edit` to a copy of the overrides, writes the copy (when there is a file) and only
   * then makes it current: an answer that says a change was made is sent after it is on disk.
   * Changes are queued, so writes never interleave and none is lost.
   */
  #change(edit: (next: Map<string, Map<string, Override>>) => boolean | void): Promise<void> {
    const run = this.#writing.then(async () => {
      const next = new Map([...this.#overrides].map(([env, flags]) => [env, new Map(flags)]));
      if (edit(next) === false) return;
      try {
        await this.#write(next);
      } catch (error) {
        const cause = (error as NodeJS.ErrnoException).code ?? "error";
        throw new AdminError(
          500,
          "NOT_SAVED",
          `the change was not made: cannot write the overrides file ${this.options.file} (${cause}: ${(error as Error).message})`,
        );
      }
      this.#overrides = next;
    });
    this.#writing = run.catch(() => undefined);
    return run;
  }

  /** The file (when there is one) with these overrides. */
  async #write(overrides: Map<string, Map<string, Override>>): Promise<void> {
    const { file } = this.options;
    if (!file) return;
    const text = `# flagserve overrides (--overrides): rewritten by the server on every change\n${yaml().stringify({ environments: listOf(overrides) })}`;
    await writeFileDurable(file, text);
  }

  /**
   * Writes the overrides without those a reload found stale (already gone from what is served).
   * They are deleted again in the copy written: a change queued before the reload copied them.
   * A failed write is logged.
   */
  #drop(env: string, keys: readonly string[]): Promise<void> {
    return this.#change((next) => {
      for (const key of keys) next.get(env)?.delete(key);
    }).catch((error: Error) => this.options.logger.error(error.message));
  }

  /** Resolves once every write queued so far is done (shutdown waits for it). */
  settled(): Promise<void> {
    return this.#writing;
  }
}

function setIn(overrides: Map<string, Map<string, Override>>, env: string, key: string, override: Override): void {
  let flags = overrides.get(env);
  if (!flags) overrides.set(env, (flags = new Map()));
  flags.set(key, override);
}

function listOf(overrides: Map<string, Map<string, Override>>): OverrideList {
  const out: OverrideList = {};
  for (const [env, flags] of [...overrides].sort(([a], [b]) => a.localeCompare(b))) {
    if (flags.size > 0) out[env] = Object.fromEntries([...flags].sort(([a], [b]) => a.localeCompare(b)));
  }
  return out;
}
