/**
 * The OpenFeature CLI's flag manifest, as plain data: the file `openfeature generate` reads
 * (`flags.json`, `flagserve manifest`) and the envelope of its Manifest Management API
 * (`GET /openfeature/v0/manifest`, read by `openfeature pull`). Both are made from an
 * environment's compiled flags, the ones the server evaluates, so a flag's `defaultValue` is the
 * value OFREP answers when no targeting matches (see docs/typed-flags.md).
 */
import type { CompiledFlag } from "../engine/types.js";
import { canonicalJson, compare, setOwn } from "../model/json.js";
import type { EnvironmentConfig, JsonPath, JsonValue } from "../model/types.js";

export type ManifestFlagType = "boolean" | "string" | "integer" | "float" | "object";

/** A flag as the manifest file describes it. */
export interface ManifestFlag {
  flagType: ManifestFlagType;
  defaultValue: JsonValue;
  description?: string;
}

/** The manifest file (`flags.json`). */
export interface Manifest {
  $schema: string;
  flags: Record<string, ManifestFlag>;
}

/** A flag as the Manifest Management API describes it (`ManifestFlag` in its OpenAPI description). */
export interface ManifestApiFlag {
  key: string;
  type: ManifestFlagType;
  description?: string;
  /** null for a flag without a default variant: `openfeature pull` then asks for one (or fails with --no-prompt). */
  defaultValue: JsonValue | null;
}

/** The flag metadata key whose value describes the flag in the manifest. */
export const DESCRIPTION_KEY = "description";

/** What the OpenFeature CLI writes as `$schema` in the manifests it makes: editors then check the file. */
export const MANIFEST_SCHEMA_URL = "https://raw.githubusercontent.com/open-feature/cli/refs/heads/main/schema/v0/flag-manifest.json";

/** An environment's served flags (compiled) and its configuration (each flag's own metadata): a snapshot or a load. */
export interface EnvironmentFlags {
  readonly config: EnvironmentConfig;
  readonly flags: ReadonlyMap<string, CompiledFlag>;
}

/** One flag described, or why it cannot be. */
type Described = { flag: Omit<ManifestFlag, "defaultValue"> & { defaultValue: JsonValue | null } } | { problem: string };

/**
 * Why a manifest cannot be made. `invalid`: the flag answers PARSE_ERROR; `no-default`: it has
 * no default variant; `disagree`: the environments say different things about it.
 */
export interface ManifestProblem {
  kind: "invalid" | "no-default" | "disagree";
  environment: string;
  flag: string;
  /** Where in the flag's definition (`["defaultVariant"]`), to locate it in its file. */
  path: JsonPath;
  message: string;
}

const typeOfValue = (value: JsonValue): ManifestFlagType | "null" => {
  if (value === null) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "float";
  if (typeof value === "object") return "object";
  return typeof value as "boolean" | "string";
};

/**
 * The type of a flag's variant values: one JSON type, numbers being `integer` when every one is
 * whole and `float` as soon as one is not. Else what is wrong (the loader already refuses mixed
 * types; this never guesses).
 */
export function flagTypeOf(values: Iterable<JsonValue>): ManifestFlagType | { problem: string } {
  const types = new Set<ManifestFlagType | "null">();
  for (const value of values) types.add(typeOfValue(value));
  if (types.has("integer") && types.has("float")) types.delete("integer");
  const [only, ...others] = types;
  if (only === undefined) return { problem: "it has no variants" };
  if (others.length > 0 || only === "null") return { problem: `its variants mix types (${[...types].sort().join(", ")})` };
  return only;
}

/** Each flag of the environment by key (sorted), described from the definition the environment serves. */
function describeFlags({ config, flags }: EnvironmentFlags): Map<string, Described> {
  const described = new Map<string, Described>();
  for (const key of [...flags.keys()].sort(compare)) {
    const flag = flags.get(key)!;
    const definition = Object.hasOwn(config.flags, key) ? config.flags[key] : undefined;
    // A flag that answers PARSE_ERROR (served with --allow-invalid, or broken by an edit before it was ever good).
    if (!definition && config.invalidFlags && Object.hasOwn(config.invalidFlags, key)) {
      described.set(key, { problem: config.invalidFlags[key]! });
      continue;
    }
    const flagType = flagTypeOf(Object.values(flag.variants));
    if (typeof flagType !== "string") {
      described.set(key, flagType);
      continue;
    }
    const { defaultVariant } = flag;
    const defaultValue = defaultVariant !== null && Object.hasOwn(flag.variants, defaultVariant) ? flag.variants[defaultVariant]! : null;
    // The flag's own metadata: the flag set's (merged into every compiled flag) describes the set, not each flag.
    const description = definition?.metadata[DESCRIPTION_KEY];
    described.set(key, { flag: { flagType, defaultValue, ...(description !== undefined && { description: String(description) }) } });
  }
  return described;
}

/**
 * The envelope `GET /openfeature/v0/manifest` answers for one environment, flags sorted by key;
 * or the flags that cannot be described (they answer PARSE_ERROR).
 */
export function manifestEnvelope(
  environment: EnvironmentFlags,
): { flags: ManifestApiFlag[] } | { invalid: { flag: string; problem: string }[] } {
  const flags: ManifestApiFlag[] = [];
  const invalid: { flag: string; problem: string }[] = [];
  for (const [key, described] of describeFlags(environment)) {
    if ("problem" in described) invalid.push({ flag: key, problem: described.problem });
    else {
      const { flagType, description, defaultValue } = described.flag;
      flags.push({ key, type: flagType, ...(description !== undefined && { description }), defaultValue });
    }
  }
  return invalid.length > 0 ? { invalid } : { flags };
}

export interface ManifestBuild {
  /** Absent when there are problems. */
  manifest?: Manifest;
  problems: ManifestProblem[];
  /** Flags not defined by every environment, left out: flag key -> the environments that define it. */
  leftOut: Map<string, string[]>;
}

/**
 * The manifest of one environment, or of the flags every one of several environments defines:
 * a flag is in it when each environment gives it the same type (integer and float numbers make
 * float), the same default value and the same description (or none); otherwise each
 * environment's say is a problem. A flag without a default variant is a problem too: the file
 * must give a `defaultValue`.
 */
export function buildManifest(environments: readonly EnvironmentFlags[]): ManifestBuild {
  const names = environments.map((e) => e.config.name);
  const described = environments.map(describeFlags);
  const problems: ManifestProblem[] = [];
  const leftOut = new Map<string, string[]>();
  const flags: Record<string, ManifestFlag> = {};
  const keys = [...new Set(described.flatMap((d) => [...d.keys()]))].sort(compare);
  for (const key of keys) {
    const defining = names.filter((_, i) => described[i]!.has(key));
    if (defining.length < names.length) {
      leftOut.set(key, defining);
      continue;
    }
    const each = described.map((d) => d.get(key)!);
    const own: ManifestProblem[] = [];
    each.forEach((d, i) => {
      const environment = names[i]!;
      if ("problem" in d)
        own.push({ kind: "invalid", environment, flag: key, path: [], message: `flag '${key}' cannot be described: ${d.problem}` });
      else if (d.flag.defaultValue === null) {
        const variants = Object.keys(environments[i]!.flags.get(key)!.variants).join(", ");
        own.push({
          kind: "no-default",
          environment,
          flag: key,
          path: ["defaultVariant"],
          message: `flag '${key}' has no defaultVariant, and the manifest needs its defaultValue: give it one of its variants (${variants})`,
        });
      }
    });
    if (own.length > 0) {
      problems.push(...own);
      continue;
    }
    const agreed = agree(
      key,
      names,
      each.map((d) => (d as { flag: ManifestFlag }).flag),
    );
    if ("problems" in agreed) problems.push(...agreed.problems);
    else setOwn(flags, key, agreed.flag);
  }
  return { ...(problems.length === 0 && { manifest: { $schema: MANIFEST_SCHEMA_URL, flags } }), problems, leftOut };
}

/** One flag as several environments describe it: the one description, or each environment's say where they differ. */
function agree(
  key: string,
  names: readonly string[],
  flags: readonly ManifestFlag[],
): { flag: ManifestFlag } | { problems: ManifestProblem[] } {
  const types = flags.map((f) => f.flagType);
  // Numbers are one type: float as soon as one environment has a float (as within one flag).
  const numbers = types.every((t) => t === "integer" || t === "float");
  const differing = (label: string, path: JsonPath, texts: readonly string[]): ManifestProblem[] =>
    new Set(texts).size <= 1
      ? []
      : names.map((environment, i) => ({
          kind: "disagree" as const,
          environment,
          flag: key,
          path,
          message: `flag '${key}': ${label} ${texts[i]} here; ${elsewhere(names, texts, i)}`,
        }));
  const typeProblems = differing("type", ["variants"], numbers ? types.map(() => "number") : types);
  const problems = [
    ...typeProblems,
    // Values of different types differ anyway: said once, as the type.
    ...(typeProblems.length > 0
      ? []
      : differing(
          "default value",
          ["defaultVariant"],
          flags.map((f) => canonicalJson(f.defaultValue)),
        )),
    ...differing(
      "description",
      ["metadata", DESCRIPTION_KEY],
      flags.map((f) => (f.description === undefined ? "none" : JSON.stringify(f.description))),
    ),
  ];
  if (problems.length > 0) return { problems };
  const flagType = numbers ? (types.includes("float") ? "float" : "integer") : types[0]!;
  const { defaultValue, description } = flags[0]!;
  return { flag: { flagType, defaultValue, ...(description !== undefined && { description }) } };
}

/** "false in production, staging; 3 in qa": what the other environments say, grouped by what they say. */
function elsewhere(names: readonly string[], texts: readonly string[], here: number): string {
  const byText = new Map<string, string[]>();
  texts.forEach((text, i) => {
    if (text !== texts[here]) byText.set(text, [...(byText.get(text) ?? []), names[i]!]);
  });
  return [...byText].map(([text, envs]) => `${text} in ${envs.join(", ")}`).join("; ");
}

/** The manifest file's text: every object's keys sorted, two-space indents and a final newline (the OpenFeature CLI's own layout). */
export const manifestText = (manifest: Manifest): string => `${canonicalJson(manifest, 2)}\n`;
