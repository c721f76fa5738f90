/**
 * Long loads are written as generators that `yield` between steps (files, environments, chunks
 * of flags): driven synchronously for inline configurations, or with a turn of the event loop
 * between steps for files, so a reload of 40 000 flags never holds requests up for the whole load.
 */
export type Steps<T> = Generator<void, T, void>;

export function runSteps<T>(steps: Steps<T>): T {
  let next = steps.next();
  while (!next.done) next = steps.next();
  return next.value;
}

export async function runStepsYielding<T>(steps: Steps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    next = steps.next();
  }
  return next.value;
}
