/**
 * Checked documents -> one EnvironmentConfig. A subdirectory's files are merged entry by
 * entry; defining the same thing twice is an error that names both places, because silently
 * picking one would make the result depend on file order.
 */
import { docProblem, type EnvDocument } from "./positions.js";
import { schemaPart } from "./schema.js";
import {
  NO_METADATA,
  type EnvironmentConfig,
  type FlagDefinition,
  type FlagState,
  type JsonObject,
  type JsonPath,
  type JsonValue,
  type Metadata,
  type NotificationTarget,
  type Problem,
} from "../model/types.js";
import { isRecord, setOwn } from "../model/json.js";

/** Where something was written: the document and the path inside it. */
export interface Origin {
  doc: EnvDocument;
  path: JsonPath;
}

export interface MergedEnvironment {
  config: EnvironmentConfig;
  docs: readonly EnvDocument[];
  /** Where each flag, segment and the API key came from, to locate later (engine) errors. */
  origins: { flags: Map<string, Origin>; segments: Map<string, Origin>; apiKey?: Origin };
  /** Problems that take the whole environment out. */
  problems: Problem[];
  /** Flags defined twice, by key: neither definition is served. */
  flagProblems: Map<string, Problem[]>;
}

/** `/abs/file.yaml:3:3`: where an origin's key is. */
export const originText = (o: Origin): string => {
  const { line, col } = o.doc.source.locate([...o.doc.prefix, ...o.path], "key");
  return `${o.doc.source.file}:${line}:${col}`;
};

/** A flag as a file writes it: the schema's `flag` (`flagWithKey` in flagd's list form, which adds `key`). */
interface FlagInput {
  state?: FlagState;
  variants: Record<string, JsonValue>;
  defaultVariant?: string | null;
  targeting?: JsonObject;
  metadata?: Metadata;
}

// Type guards from the published schema: a part that passes is what its type says.
const isFlag = schemaPart<FlagInput>("flag");
const isFlagWithKey = schemaPart<FlagInput & { key: string }>("flagWithKey");
const isMetadataValue = schemaPart<Metadata[string]>("metadataValue");
const isNotification = schemaPart<NotificationTarget>("notification");

/**
 * Merges documents into one environment, in order. Flags in `brokenFlags` (their problems were
 * reported) are left out, but still count as defined for duplicate checks. Parts whose shape is
 * wrong are skipped (the schema has reported them), checked one by one only in documents that are
 * not in `schemaValid` (those that passed the schema as a whole).
 */
export function mergeDocuments(
  name: string,
  docs: readonly EnvDocument[],
  files: readonly string[],
  brokenFlags: ReadonlySet<string>,
  schemaValid: ReadonlySet<EnvDocument>,
): MergedEnvironment {
  const config: EnvironmentConfig = { name, metadata: {}, segments: {}, flags: {}, notifications: [], files: [...files] };
  const origins: MergedEnvironment["origins"] = { flags: new Map(), segments: new Map() };
  const metadataOrigins = new Map<string, Origin>();
  const merged: MergedEnvironment = { config, docs, origins, problems: [], flagProblems: new Map() };

  /** Adds one named entry (its value made only if it is served: undefined when its shape is wrong), or reports where it was defined first. */
  const add = <T>(
    what: string,
    record: Record<string, T>,
    seen: Map<string, Origin>,
    key: string,
    value: () => T | undefined,
    origin: Origin,
    keyPath: JsonPath = origin.path,
  ): void => {
    const first = seen.get(key);
    if (first) {
      const problem = docProblem(origin.doc, keyPath, `${what} '${key}' is also defined in ${originText(first)}`, "key");
      if (what === "flag") {
        // Which definition is meant is not ours to guess: the flag is not served.
        merged.flagProblems.set(key, [...(merged.flagProblems.get(key) ?? []), problem]);
        Reflect.deleteProperty(record, key);
      } else merged.problems.push(problem);
      return;
    }
    seen.set(key, origin);
    if (what === "flag" && brokenFlags.has(key)) return;
    const v = value();
    if (v !== undefined) setOwn(record, key, v);
  };

  for (const doc of docs) {
    const d = doc.value;
    if (!isRecord(d)) continue;
    const is = <T>(guard: (v: unknown) => v is T, v: unknown): v is T => schemaValid.has(doc) || guard(v);
    if (typeof d.apiKey === "string") {
      if (origins.apiKey) merged.problems.push(docProblem(doc, ["apiKey"], `apiKey is also set in ${originText(origins.apiKey)}`, "key"));
      else {
        origins.apiKey = { doc, path: ["apiKey"] };
        config.apiKey = d.apiKey;
      }
    }
    for (const [key, value] of entries(d.metadata)) {
      const checked = () => (is(isMetadataValue, value) ? value : undefined);
      add("metadata", config.metadata, metadataOrigins, key, checked, { doc, path: ["metadata", key] });
    }
    // flagd's `$evaluators` and our `segments` are one namespace: `$ref` cannot tell them apart.
    for (const section of ["segments", "$evaluators"] as const) {
      for (const [key, value] of entries(d[section])) {
        add("segment", config.segments, origins.segments, key, () => value, { doc, path: [section, key] });
      }
    }
    if (Array.isArray(d.flags)) {
      // flagd's daemon form: a list of flags, each naming itself with `key`.
      for (const [i, raw] of (d.flags as unknown[]).entries()) {
        if (!isRecord(raw) || typeof raw.key !== "string") continue; // the schema has said so
        const value = () => (is(isFlagWithKey, raw) ? toFlag(raw) : undefined);
        add("flag", config.flags, origins.flags, raw.key, value, { doc, path: ["flags", i] }, ["flags", i, "key"]);
      }
    }
    for (const [key, raw] of entries(d.flags)) {
      const value = () => (is(isFlag, raw) ? toFlag(raw) : undefined);
      add("flag", config.flags, origins.flags, key, value, { doc, path: ["flags", key] });
    }
    if (Array.isArray(d.notifications)) config.notifications.push(...d.notifications.filter((n: unknown) => is(isNotification, n)));
  }
  return merged;
}

/** A mapping's entries, none for anything else (parsed YAML or JSON holds JsonValues; validateDocument reports non-finite numbers). */
const entries = (v: unknown): [string, JsonValue][] => (isRecord(v) ? (Object.entries(v) as [string, JsonValue][]) : []);

/**
 * Each flag value's definition, made once: the loader reuses unchanged values (memo.ts), so an
 * unchanged flag keeps its definition object, which is how the compiler and the diff tell.
 */
const definitions = new WeakMap<FlagInput, FlagDefinition>();

/** The file's flag with flagd's defaults made explicit (and flagd's list-form `key` dropped). */
function toFlag(raw: FlagInput): FlagDefinition {
  let flag = definitions.get(raw);
  if (flag) return flag;
  flag = {
    state: raw.state ?? "ENABLED",
    variants: raw.variants,
    defaultVariant: raw.defaultVariant ?? null,
    metadata: raw.metadata ?? NO_METADATA,
  };
  if (raw.targeting !== undefined) flag.targeting = raw.targeting;
  definitions.set(raw, flag);
  return flag;
}
