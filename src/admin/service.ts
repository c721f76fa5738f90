/**
 * Overrides with their checks: the operations the admin API, the CLI (through it) and the
 * programmatic API share. Each set or clear re-applies the environment through the same path a
 * reload takes, so events, ETags, notifications and metrics follow.
 */
import type { FlagStore } from "../store/store.js";
import { AdminError } from "./errors.js";
import { parseOverride, type Override, type OverrideLayer, type OverrideList } from "./overrides.js";

export interface OverrideService {
  list(): OverrideList;
  /** `override` is `{variant}` or `{state}`, checked here (400/404/422 AdminErrors). */
  set(env: string, flagKey: string, override: unknown): Promise<Override>;
  /** One flag's override, or (no key) all of the environment's; returns the flags that had one. */
  clear(env: string, flagKey?: string): Promise<string[]>;
}

export interface OverrideServiceOptions {
  store: FlagStore;
  layer: OverrideLayer;
  /** Builds the environment's snapshot again from its last load, through the layer. */
  reapply(env: string): Promise<unknown>;
}

export function createOverrideService({ store, layer, reapply }: OverrideServiceOptions): OverrideService {
  const baseOf = (env: string) => {
    const base = store.get(env) ? layer.base(env) : undefined;
    if (!base)
      throw new AdminError(
        404,
        "ENVIRONMENT_NOT_FOUND",
        `no environment named '${env}' (have: ${[...store.environments.keys()].sort().join(", ")})`,
      );
    return base;
  };
  const definitionOf = (env: string, flagKey: string) => {
    const { flags } = baseOf(env).config;
    // A flag whose definition is broken is overridden on top of its last good one.
    const def = Object.hasOwn(flags, flagKey) ? flags[flagKey] : layer.lastGood(env, flagKey);
    if (!def) throw new AdminError(404, "FLAG_NOT_FOUND", `environment ${env} has no flag '${flagKey}'`, { key: flagKey });
    return def;
  };

  return {
    list: () => layer.list(),
    async set(env, flagKey, input) {
      const override = parseOverride(input);
      if (typeof override === "string") throw new AdminError(400, "INVALID_REQUEST", override);
      const def = definitionOf(env, flagKey);
      if ("variant" in override && !Object.hasOwn(def.variants, override.variant)) {
        const validVariants = Object.keys(def.variants);
        throw new AdminError(
          422,
          "VARIANT_NOT_FOUND",
          `flag ${flagKey} has no variant '${override.variant}' (valid: ${validVariants.join(", ")})`,
          {
            key: flagKey,
            validVariants,
          },
        );
      }
      await layer.set(env, flagKey, override);
      await reapply(env);
      return override;
    },
    async clear(env, flagKey) {
      // The overrides of an environment not served (removed since, or not loaded yet) are kept
      // for it: clearable all the same, with no definition to check the flag against.
      if (store.get(env) || !layer.keeps(env)) {
        baseOf(env);
        if (flagKey !== undefined && !layer.get(env, flagKey)) definitionOf(env, flagKey); // 404 for a flag that does not exist
      }
      const removed = await layer.clear(env, flagKey);
      // (Served again meanwhile, the environment may have taken them in.)
      if (removed.length > 0 && store.get(env)) await reapply(env);
      return removed;
    },
  };
}
