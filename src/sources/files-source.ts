/** The file source: a directory of environment files and subdirectories, or one file (see docs/format.md). */
import { FileTexts } from "./files.js";
import type { InputSet } from "./inputs.js";
import { readFiles } from "./read-once.js";
import type { ConfigSource, SourceListener, SourceLoad } from "./source.js";
import type { ConfigWatcher } from "./watch.js";

export class FileSource implements ConfigSource {
  #watcher: ConfigWatcher | undefined;
  #closed = false;
  /** PATH could not be read at the last read (a "" problem): the watcher may have lost its handles. */
  #unreadable = false;

  readonly kind = "files";
  /** What the last read read: unchanged files are not read again. */
  readonly texts: FileTexts;

  constructor(
    readonly id: string,
    options: { racyMs?: number } = {},
  ) {
    this.texts = new FileTexts(options.racyMs);
  }

  async read(inputs?: InputSet): Promise<SourceLoad> {
    const load = await readFiles(this.id, inputs, this.texts);
    const unreadable = load.problems.some((p) => p.env === "");
    // Readable again (after chmod, a directory moved back...): start the watcher afresh.
    if (this.#unreadable && !unreadable) this.#watcher?.restart();
    this.#unreadable = unreadable;
    return load;
  }

  async watch(listener: SourceListener): Promise<void> {
    // Loaded here: reading (validate, keys, eval) does not need chokidar.
    const { watchConfig } = await import("./watch.js");
    const watcher = await watchConfig({
      path: this.id,
      onChange: () => listener.changed(),
      onError: (error) => listener.error(new Error(`watching ${this.id}: ${error.message}`)),
    });
    if (this.#closed) await watcher.close();
    else this.#watcher = watcher;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#watcher?.close();
  }
}
