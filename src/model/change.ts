/** One change between two versions of an environment: what a reload announces to its subscribers. */
import type { FlagDefinition, JsonValue } from "./types.js";

export type ChangeKind = "created" | "updated" | "deleted";

export type Change =
  | { kind: "flag"; key: string; change: ChangeKind; before?: FlagDefinition; after?: FlagDefinition }
  | { kind: "segment"; key: string; change: ChangeKind; before?: JsonValue; after?: JsonValue }
  | { kind: "api-key"; change: "updated" };
