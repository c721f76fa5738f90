/** Configuration: what the sources read (src/sources/) -> parse YAML with positions -> validate -> environments. */
export {
  loadConfig,
  loadInlineConfig,
  loadSourceReads,
  loadSources,
  type ConfigLoad,
  type LoadedEnvironment,
  type LoadOptions,
} from "./load.js";
export { parseYaml, startParseWorker, type ParsedFile } from "./parse.js";
export { LoadMemo, type WorkCounts } from "./memo.js";
export { SCHEMA_PATH, flagserveSchema, isEnvironmentName } from "./schema.js";
export type { EnvVars } from "./expand.js";
export {
  formatProblem,
  type EnvironmentConfig,
  type FlagDefinition,
  type FlagState,
  type JsonObject,
  type JsonValue,
  type Metadata,
  type NotificationTarget,
  type Problem,
} from "../model/types.js";
