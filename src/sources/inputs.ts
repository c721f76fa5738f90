/**
 * What a load read, remembered so that a later look can tell whether it changed. Watcher
 * notifications are hints that make a reload fast; this is what makes it certain: after each
 * reload, and on a cheap periodic check, every input of the last load is asked whether it
 * changed, and one that did causes another reload. A file answers from its signature
 * (`./files.ts`); a URL from whether its latest poll changed what it hands over (`./url-source.ts`).
 */
export interface Input {
  /** A path or URL, for logs. */
  readonly id: string;
  /** Whether what `id` holds now may differ from what the load read. Cheap (a stat); never throws. */
  changed(): Promise<boolean>;
}

/** The inputs of one load. */
export class InputSet {
  readonly #inputs: Input[] = [];

  add(input: Input): void {
    this.#inputs.push(input);
  }

  /** Forgets everything recorded (the load is being redone). */
  clear(): void {
    this.#inputs.length = 0;
  }

  get size(): number {
    return this.#inputs.length;
  }

  /**
   * The id of the first input that changed since it was read, if any. All are asked at once: a
   * directory of a hundred files is checked after every reload and every 250 ms.
   */
  async changed(): Promise<string | undefined> {
    const inputs = [...this.#inputs];
    const changed = await Promise.all(inputs.map((input) => input.changed().catch(() => true)));
    return inputs[changed.indexOf(true)]?.id;
  }
}
