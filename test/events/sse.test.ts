import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { Subscriber } from "../../src/events/channel.js";
import { createSseResponse, writeNodeSse, type SseStreamOptions } from "../../src/events/sse.js";

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
      cutOff: () => (cut++, true),
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

describe("writeNodeSse", () => {
  /** A real node:http server whose one request is handled by `handle`. */
  async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void) {
    const server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
  }
  const options = (over: Partial<SseStreamOptions> = {}): SseStreamOptions => ({
    contentType: "text/event-stream",
    keyDigest: "k",
    ip: "127.0.0.1",
    maxBufferedBytes: 1024,
    attach: () => () => {},
    ...over,
  });

  it("writes the headers given, the SSE headers, the retry hint and what is sent, then ends on close()", async () => {
    const closes: string[] = [];
    let settled = false;
    const { server, url } = await serve((_req, res) => {
      void writeNodeSse(res, [["access-control-allow-origin", "*"]], options({
        attach: (s) => {
          s.send("event: x\ndata: {}\nid: 1\n\n");
          setImmediate(() => s.close());
          return () => {};
        },
        onClose: (reason) => closes.push(reason),
      })).then(() => (settled = true));
    });
    try {
      const res = await fetch(url);
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("x-accel-buffering")).toBe("no");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.text()).toBe("retry: 2000\n\nevent: x\ndata: {}\nid: 1\n\n");
      for (let i = 0; i < 100 && !settled; i++) await new Promise((r) => setTimeout(r, 10));
      expect(settled).toBe(true);
      expect(closes).toEqual(["server"]);
    } finally {
      server.close();
    }
  });

  it("never attaches a client that left before the stream started", async () => {
    let attached = 0;
    const closes: string[] = [];
    let settled!: Promise<void>;
    const { server, url } = await serve((req, res) => {
      req.socket.destroy();
      res.once("close", () => {
        settled = writeNodeSse(res, [], options({ attach: () => (attached++, () => {}), onClose: (reason) => closes.push(reason) }));
      });
    });
    try {
      await fetch(url).catch(() => undefined);
      for (let i = 0; i < 100 && !settled; i++) await new Promise((r) => setTimeout(r, 10));
      await settled;
      expect(attached).toBe(0);
      expect(closes).toEqual(["client"]);
    } finally {
      server.close();
    }
  });
});
