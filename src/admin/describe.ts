/**
 * What the dashboard shows: every environment with its flags as the files define them, the
 * override on each, its segments and any current problem. A pure function of the store's state.
 */
import { formatProblem, type EnvironmentConfig, type FlagDefinition, type JsonValue, type Problem } from "../model/types.js";
import type { FlagStore } from "../store/store.js";
import type { OverrideLayer, Override } from "./overrides.js";

export interface FlagView {
  key: string;
  state: string;
  defaultVariant: string | null;
  variants: Record<string, JsonValue>;
  hasTargeting: boolean;
  targeting?: JsonValue;
  /** Segment names the targeting refers to (`$ref`). */
  segments: string[];
  metadata: Record<string, unknown>;
  override: Override | null;
  /** Why the file's definition cannot be served (the last good one is, or PARSE_ERROR). */
  problem?: string;
}

export interface EnvironmentView {
  name: string;
  files: string[];
  /** URL sources answered from elsewhere: URL -> the URL finally read (after redirects). */
  redirects?: Record<string, string>;
  configEtag: string;
  flags: FlagView[];
  segments: Record<string, JsonValue>;
  /** Problems of the last reload (`file:line:col message`); the last good configuration is served meanwhile. */
  problems: string[];
}

/** Segment names a rule refers to, in order of first use. */
export function segmentRefs(rule: unknown, found = new Set<string>()): string[] {
  if (Array.isArray(rule)) for (const item of rule) segmentRefs(item, found);
  else if (rule !== null && typeof rule === "object") {
    for (const [key, value] of Object.entries(rule)) {
      if (key === "$ref" && typeof value === "string") found.add(value);
      else segmentRefs(value, found);
    }
  }
  return [...found];
}

const hasRule = (targeting: unknown): boolean =>
  targeting !== undefined && targeting !== null && !(typeof targeting === "object" && Object.keys(targeting).length === 0);

const NO_DEFINITION: FlagDefinition = { state: "ENABLED", variants: {}, defaultVariant: null, metadata: {} };

/**
 * Flags as the files define them; a flag whose definition is broken shows what is served
 * instead (its last good definition, if any) with the problem.
 */
function flagViews(config: EnvironmentConfig, layer: OverrideLayer): FlagView[] {
  const broken = config.invalidFlags ?? {};
  return [...new Set([...Object.keys(config.flags), ...Object.keys(broken)])].sort().map((key) => {
    const def = Object.hasOwn(config.flags, key) ? config.flags[key]! : (layer.lastGood(config.name, key) ?? NO_DEFINITION);
    return {
      key,
      state: def.state,
      defaultVariant: def.defaultVariant,
      variants: def.variants,
      hasTargeting: hasRule(def.targeting),
      ...(hasRule(def.targeting) && { targeting: def.targeting }),
      segments: segmentRefs(def.targeting),
      metadata: def.metadata,
      override: layer.get(config.name, key) ?? null,
      ...(Object.hasOwn(broken, key) && { problem: broken[key] }),
    };
  });
}

const formatted = (problems: readonly Problem[] | undefined): string[] => (problems ?? []).map(formatProblem);

export function describeEnvironments(store: FlagStore, layer: OverrideLayer): { environments: EnvironmentView[]; problems: string[] } {
  const environments = [...store.environments.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((snapshot) => {
      const config = layer.base(snapshot.name)?.config ?? snapshot.config;
      return {
        name: snapshot.name,
        files: config.files,
        ...(config.redirects && { redirects: config.redirects }),
        configEtag: snapshot.configEtag,
        flags: flagViews(config, layer),
        segments: config.segments,
        problems: formatted(store.problems.get(snapshot.name)),
      };
    });
  // Problems not tied to a served environment: the configuration's own, and environments never loaded.
  const elsewhere = [...store.problems].filter(([env]) => !store.environments.has(env)).flatMap(([, list]) => formatted(list));
  return { environments, problems: elsewhere };
}
