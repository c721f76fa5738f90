/** The configuration model: what the files say, after parsing and validation. */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Where a value sits in a JSON document: object keys and array indexes from the root. */
export type JsonPath = readonly (string | number)[];

/** Flag-set and flag metadata: primitive values only (OFREP `metadata`). */
export type Metadata = Record<string, string | number | boolean>;

/** The metadata of every flag that has none: one frozen object, not one per flag of a 10 000-flag file. */
export const NO_METADATA: Metadata = Object.freeze({});

/** The metadata a flag answers with (flagd's patchMetadata): the flag set's, under the flag's own keys; frozen. */
export function flagMetadata(setMetadata: Metadata | undefined, own: Metadata): Metadata {
  const merged = { ...setMetadata, ...own };
  return Object.keys(merged).length === 0 ? NO_METADATA : Object.freeze(merged);
}

export type FlagState = "ENABLED" | "DISABLED";

/** One flag as written in a file (flagd format), defaults applied. */
export interface FlagDefinition {
  state: FlagState;
  variants: Record<string, JsonValue>;
  /** null: the caller's code default. */
  defaultVariant: string | null;
  /** JsonLogic; absent or `{}` means no targeting. `$ref`s are still unresolved here. */
  targeting?: JsonObject;
  metadata: Metadata;
}

export interface NotificationTarget {
  type: "slack" | "webhook";
  url: string;
  secret?: string;
  /** Which change kinds to send; absent means all. */
  events?: string[];
}

/** One environment, merged from its files. */
export interface EnvironmentConfig {
  name: string;
  /** The key written in the file, if any. */
  apiKey?: string;
  metadata: Metadata;
  /** Named JsonLogic rules (`segments`, or flagd's `$evaluators`). */
  segments: Record<string, JsonValue>;
  /** The flags that can be served as written. */
  flags: Record<string, FlagDefinition>;
  /** Flags with a problem (key -> what is wrong): each answers PARSE_ERROR, or after a reload keeps its last good one in `flags`. */
  invalidFlags?: Record<string, string>;
  notifications: NotificationTarget[];
  /** Absolute paths of the files this environment was read from. */
  files: string[];
  /** URL sources whose document was answered from elsewhere: source URL -> the URL finally read (after redirects). */
  redirects?: Record<string, string>;
}

/** A validation problem, located in a source file. Lines and columns are 1-based. */
export interface Problem {
  file: string;
  line: number;
  col: number;
  message: string;
}

export const formatProblem = (p: Problem): string => `${p.file}:${p.line}:${p.col} ${p.message}`;
