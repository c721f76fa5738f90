/**
 * Long loads are written as generators that `yield` between small pieces of work (a file, an
 * environment, ITEMS_PER_YIELD flags): driven synchronously for inline configurations and at
 * start-up, or, for a running server's reloads, with a turn of the event loop once a step has
 * run STEP_MS, so that a reload of 10 000 flags never holds a request up for longer than that.
 * Measuring time rather than counting work keeps steps short where work is slow: on the first
 * edit the code runs unoptimized, five to ten times slower than once it is warm.
 */
export type Steps<T> = Generator<void, T, void>;

/** Items (flags, keys, nodes) a loop handles between two yields: a yield that takes no turn costs a generator resume. */
export const ITEMS_PER_YIELD = 64;

/** How long the serving thread works on a load before it answers what is waiting. */
export const STEP_MS = 2;

export function runSteps<T>(steps: Steps<T>): T {
  let next = steps.next();
  while (!next.done) next = steps.next();
  return next.value;
}

/**
 * When the event loop last had a turn taken here. Shared by every run: consecutive runs (a load
 * awaits one after another without a turn between them) count as one step. An earlier turn
 * taken elsewhere only makes a step end sooner.
 */
let lastTurn = performance.now();

export async function runStepsYielding<T>(steps: Steps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    if (turnIsDue()) await takeTurn();
    next = steps.next();
  }
  return next.value;
}

/**
 * A turn of the event loop if a step has run STEP_MS: for the async parts of a reload, between
 * pieces of work that are each a millisecond or two on a big file (reading it, hashing the bytes
 * read, handing them to the parse worker) and would otherwise run as one task, chained by awaits.
 */
export async function turnIfDue(): Promise<void> {
  if (turnIsDue()) await takeTurn();
}

const turnIsDue = (): boolean => performance.now() - lastTurn >= STEP_MS;

async function takeTurn(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastTurn = performance.now();
}
