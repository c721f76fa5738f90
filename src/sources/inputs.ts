/**
 * What a load read, remembered so that a later look can tell whether it changed: what makes reloads
 * converge (src/changes/reloader.ts). A file answers from its signature (`./files.ts`); a URL from
 * whether its latest poll changed what it hands over (`./url-source.ts`).
 */
import { setTimeout as sleep } from "node:timers/promises";

export interface Input {
  /** A path or URL, for logs. */
  readonly id: string;
  /** Read before it had settled (a file just written): when it will have. */
  readonly settleAt?: number;
  /** Whether it is no longer as read by its stat alone (a signature that moved): what settling asks. */
  moved?(): Promise<boolean>;
  /** Whether what `id` holds now may differ from what the load read. Cheap (a stat); never throws. */
  changed(): Promise<boolean>;
}

const SETTLE_POLL_MS = 40;

/** The inputs of one load. */
export class InputSet {
  readonly #inputs: Input[] = [];

  /**
   * `settleLater`: readers may take a file before it has settled (see files.ts), as the owner checks
   * `settled()` before using the read: a running server's reloads, which parse a big file meanwhile.
   */
  constructor(public settleLater = false) {}

  add(input: Input): void {
    this.#inputs.push(input);
  }

  /** Forgets everything recorded (the load is being redone). */
  clear(): void {
    this.#inputs.length = 0;
  }

  /**
   * Once every input read before it had settled has, whether each is still as read. Looks every
   * SETTLE_POLL_MS meanwhile, so that a file that moves (an empty file being filled) answers false at once.
   */
  async settled(): Promise<boolean> {
    const unsettled = this.#inputs.filter((input) => input.settleAt !== undefined);
    if (unsettled.length === 0) return true;
    const settleAt = Math.max(...unsettled.map((input) => input.settleAt!));
    for (;;) {
      const wait = settleAt - Date.now();
      if (wait > 0) await sleep(Math.min(wait, SETTLE_POLL_MS));
      const moved = await Promise.all(unsettled.map((input) => (input.moved?.() ?? input.changed()).catch(() => true)));
      if (moved.includes(true)) return false;
      if (wait <= SETTLE_POLL_MS) return true;
    }
  }

  /** The id of the first input that changed since it was read, if any; all are asked at once (there may be hundreds). */
  async changed(): Promise<string | undefined> {
    const inputs = [...this.#inputs];
    const changed = await Promise.all(inputs.map((input) => input.changed().catch(() => true)));
    return inputs[changed.indexOf(true)]?.id;
  }
}
