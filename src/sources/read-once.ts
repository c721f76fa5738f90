/** Sources read once, for the commands that only look (validate, keys, eval): no watcher is loaded, so they start without chokidar. */
import { stemOf, discover } from "./discover.js";
import { readStableFile, type FileTexts } from "./files.js";
import type { InputSet } from "./inputs.js";
import { sourceKindOf, type SourceDocument, type SourceLoad } from "./source.js";
import { UrlSource, type UrlSourceOptions } from "./url-source.js";

/** A file or directory PATH as it is now: what the file source reads each time, not reading again what `texts` proves unchanged. */
export async function readFiles(path: string, inputs?: InputSet, texts?: FileTexts): Promise<SourceLoad> {
  try {
    const found = await discover(path, inputs);
    const read = async (file: string): Promise<SourceDocument> => ({ file, ...(await readStableFile(file, { inputs, texts })) });
    const documents = found.file ? [{ stem: stemOf(found.file), document: await read(found.file) }] : [];
    const environments = await Promise.all(
      found.environments.map(async (env) => ({ ...env, documents: await Promise.all(env.files.map(read)) })),
    );
    return { id: found.root, documents, environments, problems: found.problems };
  } finally {
    texts?.end();
  }
}

/** A command-line SOURCE (a path, or a URL: one GET) read once. */
export async function readOnce(spec: string, options: UrlSourceOptions = {}): Promise<SourceLoad> {
  if (sourceKindOf(spec) !== "url") return readFiles(spec);
  const source = new UrlSource(spec, options);
  try {
    return await source.read();
  } finally {
    await source.close();
  }
}
