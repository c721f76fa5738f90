/** Bounded waits: poll a condition until it holds, failing with what was awaited. */
import { setTimeout as sleep } from "node:timers/promises";

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
