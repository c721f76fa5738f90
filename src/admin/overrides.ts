/**
 * The overrides layer: per environment, flags forced to one variant or state, applied between
 * the loaded configuration and the snapshot (files -> config -> overrides -> snapshot -> diff ->
 * events). Every load passes through `apply`, so overrides survive reloads, and an override whose
 * flag or variant an edit removed is dropped there (and logged). With a file they are kept as
 * YAML across restarts.
 */
import { readFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import type { LoadedEnvironment } from "../config/index.js";
import { yaml } from "../config/yaml-package.js";
import type { FlagDefinition, FlagState } from "../model/types.js";
import type { CompiledFlag } from "../engine/types.js";
import type { Logger } from "../log/logger.js";

export type Override = { variant: string } | { state: FlagState };

/** The `--overrides` file cannot be read or is not an overrides file: the server does not start. */
export class OverridesFileError extends Error {}

/** Environment -> flag key -> override. */
export type OverrideList = Record<string, Record<string, Override>>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

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
  #overrides = new Map<string, Map<string, Override>>();
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
    if (!isRecord(environments)) throw new OverridesFileError(`--overrides ${file}: expected "environments:" mapping environment names to flag overrides`);
    for (const [env, flags] of Object.entries(environments)) {
      for (const [key, value] of Object.entries(isRecord(flags) ? flags : {})) {
        const override = parseOverride(value);
        if (typeof override === "string") this.options.logger.warn(`${file}: ${env}/${key} ignored: ${override}`);
        else this.#set(env, key, override);
      }
    }
  }

  /**
   * The hook every load goes through: remembers the file definition, returns it overridden.
   * A flag whose new definition is broken is served (and overridden) as its last good one.
   */
  readonly apply = (loaded: LoadedEnvironment): LoadedEnvironment => {
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
    for (const [key, override] of [...(overrides ?? [])]) {
      const def = Object.hasOwn(definitions, key) ? definitions[key] : undefined;
      const flag = flags.get(key);
      if (!def && Object.hasOwn(broken, key)) continue; // broken, never good: kept until fixed
      const stale = staleReason(def, override);
      if (stale || !def || !flag) {
        overrides!.delete(key);
        this.options.logger.warn(`${name}: override of ${key} dropped: ${stale ?? "the flag is no longer defined"}`);
        void this.persist();
        continue;
      }
      const [nextDef, nextFlag] = overridden(def, flag, override);
      definitions[key] = nextDef;
      flags.set(key, nextFlag);
    }
    return { config: { ...config, flags: definitions, ...(Object.keys(broken).length > 0 && { invalidFlags: broken }) }, flags };
  };

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

  get(env: string, key: string): Override | undefined {
    return this.#overrides.get(env)?.get(key);
  }

  list(): OverrideList {
    const out: OverrideList = {};
    for (const [env, flags] of [...this.#overrides].sort(([a], [b]) => a.localeCompare(b))) {
      if (flags.size > 0) out[env] = Object.fromEntries([...flags].sort(([a], [b]) => a.localeCompare(b)));
    }
    return out;
  }

  set(env: string, key: string, override: Override): void {
    this.#set(env, key, override);
    void this.persist();
  }

  /** Removes one override, or all of an environment's; returns the flag keys that had one. */
  clear(env: string, key?: string): string[] {
    const flags = this.#overrides.get(env);
    if (!flags) return [];
    const removed = key === undefined ? [...flags.keys()] : flags.has(key) ? [key] : [];
    for (const k of removed) flags.delete(k);
    if (removed.length > 0) void this.persist();
    return removed.sort();
  }

  /** Writes the file (when there is one) with the current overrides; writes never interleave. */
  persist(): Promise<void> {
    const { file, logger } = this.options;
    if (!file) return Promise.resolve();
    this.#writing = this.#writing.then(async () => {
      const text = `# flagserve overrides (--overrides): rewritten by the server on every change\n${yaml().stringify({ environments: this.list() })}`;
      await writeFileAtomic(file, text).catch((error: Error) => logger.error(`cannot write the overrides file ${file}: ${error.message}`));
    });
    return this.#writing;
  }

  #set(env: string, key: string, override: Override): void {
    let flags = this.#overrides.get(env);
    if (!flags) this.#overrides.set(env, (flags = new Map()));
    flags.set(key, override);
  }
}
