/**
 * Runs reloads one at a time and makes them converge: requests that arrive during a reload are
 * folded into one more, and the inputs each reload read (files, listings, the key state file) are
 * checked again right after it and every `checkMs`, so an edit that no notification announced (or
 * that landed while its notification's reload was already reading) still gets loaded.
 */
import { withTimeout } from "../sources/files.js";
import { InputSet } from "../sources/inputs.js";

export interface ReloaderOptions {
  /** One reload: read the configuration, recording every input in `inputs`, and apply it. */
  run(inputs: InputSet): Promise<void>;
  /** How often the last reload's inputs are checked (ms); 0: only right after each reload. */
  checkMs: number;
  /** A reload started by the periodic check failed. */
  onError(error: Error): void;
  /** The inputs of the load already applied (at start-up). */
  initial?: InputSet;
}

export interface Reloader {
  /** Reloads now, or once more after the reload in progress; resolves once the files' last state is applied. */
  reload(): Promise<void>;
  /** Stops the periodic check; resolves once a reload in progress has finished, or after a second. */
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 1_000;

export function createReloader(options: ReloaderOptions): Reloader {
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let last: InputSet | undefined = options.initial;

  const loop = async (): Promise<void> => {
    do {
      again = false;
      // Its files may be read before they settle: the loader confirms they have before it builds.
      const inputs = new InputSet(true);
      try {
        await options.run(inputs);
      } finally {
        last = inputs; // also after a failure: retried when an input changes, not in a loop
      }
      // An edit made while this reload was reading is caught here, notified or not.
      if (!again && !closed && (await inputs.changed()) !== undefined) again = true;
    } while (again && !closed);
  };

  const reload = (): Promise<void> => {
    if (running) again = true;
    else running = loop().finally(() => (running = undefined));
    return running;
  };

  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    if (!running && last && (await last.changed()) !== undefined && !closed) await reload().catch(options.onError);
    if (!closed) timer = setTimeout(check, options.checkMs).unref();
  };
  if (options.checkMs > 0) timer = setTimeout(check, options.checkMs).unref();

  return {
    reload,
    async close() {
      closed = true;
      clearTimeout(timer);
      // A reload still writing (the key state file, say) may finish, but is not waited on longer.
      if (running) await withTimeout(running, CLOSE_GRACE_MS).catch(() => undefined);
    },
  };
}
