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
export { startParseWorker } from "./parse.js";
export { LoadMemo, type WorkCounts } from "./memo.js";
export { flagserveSchema } from "./schema.js";
export { formatProblem } from "../model/types.js";
