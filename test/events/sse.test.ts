import { describe, expect, it } from "vitest";
import type { Subscriber } from "../../src/events/channel.js";
import { createSseResponse } from "../../src/events/sse.js";

function open(maxBufferedBytes: number) {
  let subscriber!: Subscriber;
  const closes: string[] = [];
  let detached = false;
  const response = createSseResponse({
    contentType: "text/event-stream",
    keyDigest: "k",
    ip: "127.0.0.1",
    maxBufferedBytes,
    attach: (s) => {
      subscriber = s;
      return () => void (detached = true);
    },
    onClose: (reason) => closes.push(reason),
  });
  return { response, subscriber, closes, isDetached: () => detached };
}

describe("createSseResponse", () => {
  it("starts with a retry hint, then streams what is sent", async () => {
    const { response, subscriber } = open(1024);
    subscriber.send("event: x\ndata: {}\nid: 1\n\n");
    subscriber.close();
    expect(await response.text()).toBe("retry: 2000\n\nevent: x\ndata: {}\nid: 1\n\n");
  });

  it("drops a client whose unread backlog passes the bound, instead of buffering without limit", async () => {
    const { response, subscriber, closes, isDetached } = open(1_000);
    const event = `data: ${"x".repeat(100)}\n\n`;
    for (let i = 0; i < 50; i++) subscriber.send(event); // nobody reads: the backlog grows
    expect(closes).toEqual(["slow"]);
    expect(isDetached()).toBe(true);
    const text = await response.text();
    // What was queued before the cut is still delivered, then the stream ends.
    expect(text.length).toBeLessThan(1_000 + 2 * event.length + 20);
    expect(text.length).toBeGreaterThan(1_000);
  });

  it("with cutOff, drops a slow client by ending its connection instead of draining the backlog", async () => {
    let cut = 0;
    let subscriber!: Subscriber;
    const closes: string[] = [];
    createSseResponse({
      contentType: "text/event-stream",
      keyDigest: "k",
      ip: "127.0.0.1",
      maxBufferedBytes: 1_000,
      attach: (s) => ((subscriber = s), () => {}),
      cutOff: () => cut++,
      onClose: (reason) => closes.push(reason),
    });
    for (let i = 0; i < 50; i++) subscriber.send(`data: ${"x".repeat(100)}\n\n`);
    expect(closes).toEqual(["slow"]);
    expect(cut).toBe(1);
  });

  it("detaches when the client goes away", async () => {
    const { response, closes, isDetached } = open(1024);
    await response.body!.cancel();
    expect(closes).toEqual(["client"]);
    expect(isDetached()).toBe(true);
  });
});
