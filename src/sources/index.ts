/** Config sources: files and directories, HTTP(S) URLs; one interface (./source.ts). */
import { FileSource } from "./files-source.js";
import { sourceKindOf, type ConfigSource } from "./source.js";
import { UrlSource, type UrlSourceOptions } from "./url-source.js";

export { InlineSource } from "./inline-source.js";
export { INLINE_ID, sourceKindOf } from "./source.js";

/** The source a spec names (see sourceKindOf): a URL (`http://`, `https://`) or a path. */
export const createSource = (spec: string, options: UrlSourceOptions = {}): ConfigSource =>
  sourceKindOf(spec) === "url" ? new UrlSource(spec, options) : new FileSource(spec);
