/** Config sources: files and directories, HTTP(S) URLs; one interface (./source.ts). */
import { FileSource } from "./files-source.js";
import type { ConfigSource } from "./source.js";
import { sourceKindOf } from "./source.js";
import { UrlSource, type UrlSourceOptions } from "./url-source.js";

export { FileSource } from "./files-source.js";
export { readFiles, readOnce } from "./read-once.js";
export { UrlSource, DEFAULT_FETCH_TIMEOUT_MS, DEFAULT_POLL_INTERVAL_MS, type UrlSourceOptions } from "./url-source.js";
export { InlineSource } from "./inline-source.js";
export {
  INLINE_ID,
  sourceKindOf,
  type ConfigSource,
  type SourceKind,
  type SourceDocument,
  type SourceEnvironment,
  type SourceListener,
  type SourceLoad,
  type SourceProblem,
} from "./source.js";

/** The source a spec names (see sourceKindOf): a URL (`http://`, `https://`) or a path. */
export const createSource = (spec: string, options: UrlSourceOptions = {}): ConfigSource =>
  sourceKindOf(spec) === "url" ? new UrlSource(spec, options) : new FileSource(spec);
