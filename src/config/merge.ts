/**
 * Schema-valid documents -> one EnvironmentConfig. A subdirectory's files are merged entry by
 * entry; defining the same thing twice is an error that names both places, because silently
 * picking one would make the result depend on file order.
 */
import { docProblem, type EnvDocument, type JsonPath } from "./positions.js";
import type { EnvironmentConfig, FlagDefinition, JsonObject, JsonValue, Metadata, NotificationTarget, Problem } from "../model/types.js";
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

/**
 * Merges documents into one environment. Flags in `brokenFlags` (their own problems were
 * reported) are left out of the configuration, but still count as defined for duplicate checks.
 * Parts whose shape is wrong are skipped: the schema has reported them.
 */
export function mergeDocuments(
  name: string,
  docs: readonly EnvDocument[],
  files: readonly string[],
  brokenFlags: ReadonlySet<string> = new Set(),
): MergedEnvironment {
  const config: EnvironmentConfig = {
    name,
    metadata: {},
    segments: {},
    flags: {},
    notifications: [],
    files: [...files],
  };
  const origins: MergedEnvironment["origins"] = { flags: new Map(), segments: new Map() };
  const metadataOrigins = new Map<string, Origin>();
  const problems: Problem[] = [];
  const flagProblems = new Map<string, Problem[]>();

  /** Adds one named entry, or reports where it was defined first. */
  const add = <T>(
    what: string,
    record: Record<string, T>,
    seen: Map<string, Origin>,
    key: string,
    value: () => T,
    origin: Origin,
    keyPath: JsonPath = origin.path,
  ) => {
    const first = seen.get(key);
    if (first) {
      const problem = docProblem(origin.doc, keyPath, `${what} '${key}' is also defined in ${originText(first)}`, "key");
      if (what === "flag") {
        // Which definition is meant is not ours to guess: the flag is not served.
        flagProblems.set(key, [...(flagProblems.get(key) ?? []), problem]);
        Reflect.deleteProperty(record, key);
      } else problems.push(problem);
      return;
    }
    seen.set(key, origin);
    if (what !== "flag" || !brokenFlags.has(key)) setOwn(record, key, value());
  };

  for (const doc of docs) {
    if (!isRecord(doc.value)) continue;
    const d = doc.value;

    if (typeof d.apiKey === "string") {
      const here: Origin = { doc, path: ["apiKey"] };
      if (origins.apiKey) problems.push(docProblem(doc, ["apiKey"], `apiKey is also set in ${originText(origins.apiKey)}`, "key"));
      else {
        origins.apiKey = here;
        config.apiKey = d.apiKey;
      }
    }

    for (const [key, value] of entries(d.metadata)) {
      add("metadata", config.metadata, metadataOrigins, key, () => value as Metadata[string], { doc, path: ["metadata", key] });
    }

    // flagd's `$evaluators` and our `segments` are one namespace: `$ref` cannot tell them apart.
    for (const section of ["segments", "$evaluators"] as const) {
      for (const [key, value] of entries(d[section])) {
        add("segment", config.segments, origins.segments, key, () => value as JsonValue, { doc, path: [section, key] });
      }
    }

    if (Array.isArray(d.flags)) {
      // flagd's daemon form: a list of flags, each naming itself with `key`.
      d.flags.forEach((raw: unknown, i) => {
        if (!isRecord(raw) || typeof raw.key !== "string") return; // the schema has said so
        const key = raw.key;
        add("flag", config.flags, origins.flags, key, () => toFlag(raw), { doc, path: ["flags", i] }, ["flags", i, "key"]);
      });
    } else {
      for (const [key, raw] of entries(d.flags)) {
        add("flag", config.flags, origins.flags, key, () => toFlag(raw as Record<string, unknown>), { doc, path: ["flags", key] });
      }
    }

    if (Array.isArray(d.notifications)) config.notifications.push(...(d.notifications as NotificationTarget[]));
  }
  return { config, docs, origins, problems, flagProblems };
}

const entries = (v: unknown): [string, unknown][] => (isRecord(v) ? Object.entries(v) : []);

/** The file's flag with flagd's defaults made explicit (and flagd's array-form `key` dropped). */
function toFlag(raw: Record<string, unknown>): FlagDefinition {
  const flag: FlagDefinition = {
    state: (raw.state as FlagDefinition["state"] | undefined) ?? "ENABLED",
    variants: raw.variants as Record<string, JsonValue>,
    defaultVariant: (raw.defaultVariant as string | null | undefined) ?? null,
    metadata: (raw.metadata as Metadata | undefined) ?? {},
  };
  if (raw.targeting !== undefined) flag.targeting = raw.targeting as JsonObject;
  return flag;
}
