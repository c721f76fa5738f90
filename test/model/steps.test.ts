import { describe, expect, it } from "vitest";
import { runSteps, runStepsYielding, STEP_MS, turnIfDue, type Steps } from "../../src/model/steps.js";

/** `pieces` pieces of work, each busy for `ms`, with a yield after each; returns how many ran. */
function* work(pieces: number, ms: number): Steps<number> {
  for (let i = 0; i < pieces; i++) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    yield;
  }
  return pieces;
}

/** How many turns the event loop took while `run` ran (one setImmediate callback per turn). */
async function turnsDuring<T>(run: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await run();
  done = true;
  return { value, turns };
}

describe("runStepsYielding", () => {
  it("gives the event loop a turn at the first yield after a step has run STEP_MS", async () => {
    const { value, turns } = await turnsDuring(() => runStepsYielding(work(10, STEP_MS)));
    expect(value).toBe(10);
    // Every piece is a step's worth: a turn after each (the last yield's too, before the value).
    expect(turns).toBeGreaterThanOrEqual(10);
  });

  it("takes no turn at yields that come sooner: work that is quick is not spread out", async () => {
    const { value, turns } = await turnsDuring(() => runStepsYielding(work(1000, 0)));
    expect(value).toBe(1000);
    // A turn only where the machine held the run up for STEP_MS (tests run side by side on two cores).
    expect(turns).toBeLessThan(100);
  });

  it("gives what runSteps gives", async () => {
    expect(await runStepsYielding(work(3, 0))).toBe(runSteps(work(3, 0)));
  });
});

describe("turnIfDue", () => {
  /** Whether the event loop had a turn while turnIfDue ran: an immediate queued before it ran first. */
  async function tookTurn(): Promise<boolean> {
    let turned = false;
    setImmediate(() => (turned = true));
    await turnIfDue();
    return turned;
  }

  it("takes a turn once a step has run STEP_MS, and none right after one", async () => {
    const until = performance.now() + STEP_MS;
    while (performance.now() < until);
    expect(await tookTurn()).toBe(true);
    // Right after a turn none is due, unless the machine held this test up for STEP_MS in between:
    // of five tries, one at least finds none due.
    const again = [];
    for (let i = 0; i < 5; i++) again.push(await tookTurn());
    expect(again).toContain(false);
  });
});
