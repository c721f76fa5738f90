/** Configuration: what the sources read (src/sources/) -> parsed -> checked -> merged into environments. */
export { loadConfig, loadInlineConfig, loadSourceReads, loadSources, type ConfigLoad, type LoadedEnvironment } from "./load.js";
export { LoadMemo } from "./memo.js";
export { flagserveSchema } from "./schema.js";
export { formatProblem } from "../model/types.js";
