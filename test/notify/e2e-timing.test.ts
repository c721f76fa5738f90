/**
 * End to end: when notifications are (not) sent. Nothing at start-up or for an invalid edit;
 * two reloads within a second make one message; a receiver that never answers does not hold
 * up the SSE event of the next edit.
 */
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { openSse, type SseBlock } from "../helpers/sse.js";
import { KEY, flagFile, pause, serveWithReceivers } from "./e2e-helpers.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const flagUpdated = (key: string) => (b: SseBlock) => b.event === "flag-updated" && JSON.parse(b.data!).flagKey === key;

async function listen(url: string) {
  const sse = await openSse(`${url}/api/v1/flags/events`, { "x-api-key": KEY, accept: "text/event-stream" });
  cleanups.push(() => sse.close());
  return sse;
}

describe("when notifications are sent", () => {
  it("sends nothing at start-up or for an invalid edit, and one message for two reloads 200 ms apart", async () => {
    const { slack, hook, file, cli, url } = await serveWithReceivers(cleanups);
    const sse = await listen(url);

    // An invalid edit (defaultVariant names no variant): logged, last good kept, nothing sent.
    await writeFile(file, flagFile({ checkout: "maybe" as "on" }));
    await cli.waitFor(/production\.yaml:\d+:\d+ .*defaultVariant 'maybe'/, "stderr");
    await pause(1300); // longer than the 1 s window, and well over a second since start-up
    expect([slack.received.length, hook.received.length]).toEqual([0, 0]);

    // Two valid edits, each its own reload (each seen as its own SSE event), 200 ms apart.
    const first = Date.now();
    await writeFile(file, flagFile({ checkout: "on" }));
    await sse.next(flagUpdated("new-checkout"));
    await pause(200 - (Date.now() - first));
    const from = sse.blocks.length;
    await writeFile(file, flagFile({ checkout: "on", green: "#00ff00" }));
    await sse.next(flagUpdated("banner-color"), 5000, from);

    const [[got]] = await Promise.all([hook.waitFor(1), slack.waitFor(1)]);
    expect(got!.json().changes).toEqual([
      { type: "flag", key: "banner-color", change: "updated", details: ['variant green: "#2da44e" -> "#00ff00"'] },
      { type: "flag", key: "new-checkout", change: "updated", details: ["defaultVariant: off -> on"] },
    ]);
    expect(slack.received[0]!.json().text).toContain("flagserve: 2 changes in production");
    await pause(300);
    expect([slack.received.length, hook.received.length]).toEqual([1, 1]);
  });

  it("delivers an SSE event while a notification request hangs unanswered", async () => {
    const { slack, hook, file, url } = await serveWithReceivers(cleanups);
    slack.replies.push("hang", "hang", "hang");
    const sse = await listen(url);

    // Without a hanging request: edit -> event.
    await writeFile(file, flagFile({ checkout: "on" }));
    await sse.next(flagUpdated("new-checkout"));

    // Its notification goes out a second later; Slack's stand-in never answers.
    await slack.waitFor(1);
    expect(slack.open()).toBe(1);
    await hook.waitFor(1); // the other target is not held up either

    // With the request hanging: the next edit's event still arrives, while it is open.
    const from = sse.blocks.length;
    await writeFile(file, flagFile({ checkout: "off" }));
    await sse.next(flagUpdated("new-checkout"), 5000, from);
    expect(slack.open()).toBe(1);
    expect(slack.received).toHaveLength(1);
  });
});
