/**
 * flagd's gRPC protocols as flagserve serves them: the service definitions read from the .proto
 * files in proto/ (flagd's published schemas, see proto/README.md) by @grpc/proto-loader, and
 * google.protobuf.Struct to and from plain JSON, which is how both protocols carry contexts,
 * metadata and object values.
 */
import { fileURLToPath } from "node:url";
import { loadPackageDefinition, type ServiceDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { JsonValue } from "../model/types.js";

/** The evaluation service's versions served; their messages are the same but for `optional`. */
export const EVALUATION_VERSIONS = ["v1", "v2"] as const;

export interface FlagdServices {
  evaluation: Record<(typeof EVALUATION_VERSIONS)[number], ServiceDefinition>;
  sync: ServiceDefinition;
}

const PROTO_DIR = fileURLToPath(new URL("../../proto/", import.meta.url));
const FILES = ["flagd/evaluation/v1/evaluation.proto", "flagd/evaluation/v2/evaluation.proto", "flagd/sync/v1/sync.proto"];

let loaded: FlagdServices | undefined;

/** The service definitions, read once (only a server with `--flagd-port` reads them). */
export function flagdServices(): FlagdServices {
  if (loaded) return loaded;
  // Field names in camelCase; int64 decoded as numbers; enums (Struct's NULL_VALUE) as names; unset fields left out.
  const definition = loadSync(FILES, { includeDirs: [PROTO_DIR], longs: Number, enums: String, defaults: false, oneofs: true });
  const root = loadPackageDefinition(definition) as unknown as {
    flagd: {
      evaluation: Record<string, { Service: { service: ServiceDefinition } }>;
      sync: { v1: { FlagSyncService: { service: ServiceDefinition } } };
    };
  };
  loaded = {
    evaluation: { v1: root.flagd.evaluation.v1!.Service.service, v2: root.flagd.evaluation.v2!.Service.service },
    sync: root.flagd.sync.v1.FlagSyncService.service,
  };
  return loaded;
}

/** google.protobuf.Value as proto-loader reads and writes it (one field set; `kind` names it when read). */
export interface ProtoValue {
  kind?: string;
  nullValue?: "NULL_VALUE" | number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct;
  listValue?: { values?: ProtoValue[] };
}

export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}

/** A JSON value as a google.protobuf.Value (non-finite numbers, which JSON cannot hold either, as null). */
export function toValue(value: unknown): ProtoValue {
  if (value === null || value === undefined) return { nullValue: "NULL_VALUE" };
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? { numberValue: value } : { nullValue: "NULL_VALUE" };
    case "string":
      return { stringValue: value };
    case "boolean":
      return { boolValue: value };
    case "object":
      return Array.isArray(value)
        ? { listValue: { values: value.map(toValue) } }
        : { structValue: toStruct(value as Record<string, unknown>) };
    default:
      return { nullValue: "NULL_VALUE" };
  }
}

/** A JSON object as a google.protobuf.Struct. */
export function toStruct(object: Readonly<Record<string, unknown>>): ProtoStruct {
  const fields: Record<string, ProtoValue> = {};
  for (const key of Object.keys(object)) fields[key] = toValue(object[key]);
  return { fields };
}

/** A google.protobuf.Value as JSON (an unset Value, which the protocol allows, as null). */
export function fromValue(value: ProtoValue | undefined): JsonValue {
  if (!value) return null;
  const kind = value.kind ?? Object.keys(value).find((k) => k !== "kind");
  switch (kind) {
    case "numberValue":
      return value.numberValue ?? 0;
    case "stringValue":
      return value.stringValue ?? "";
    case "boolValue":
      return value.boolValue ?? false;
    case "structValue":
      return fromStruct(value.structValue);
    case "listValue":
      return (value.listValue?.values ?? []).map(fromValue);
    default:
      return null;
  }
}

/** A google.protobuf.Struct as a JSON object (unset: empty). Keys are defined, never assigned: `__proto__` stays a key. */
export function fromStruct(struct: ProtoStruct | undefined | null): Record<string, JsonValue> {
  const object: Record<string, JsonValue> = {};
  const fields = struct?.fields ?? {};
  for (const key of Object.keys(fields)) {
    Object.defineProperty(object, key, { value: fromValue(fields[key]), enumerable: true, writable: true, configurable: true });
  }
  return object;
}
