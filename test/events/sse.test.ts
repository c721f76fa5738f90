import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { Subscriber } from "../../src/events/channel.js";
import { SseFrame } from "../../src/events/frame.js";
import { createSseResponse, startNodeSse, type SseStreamOptions } from "../../src/events/sse.js";

/** The stream on a Node response (as the fast path starts it), settled once the response has closed. */
const writeNodeSse = (res: ServerResponse, headers: Iterable<[string, string]>, options: SseStreamOptions): Promise<void> =>
  new Promise((resolve) => {
    if (startNodeSse(res, headers, options)) res.once("close", () => resolve());
    else resolve();
  });

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
    subscriber.send(new SseFrame("event: x\ndata: {}\nid: 1\n\n"));
    subscriber.close();
    expect(await response.text()).toBe("retry: 2000\n\nevent: x\ndata: {}\nid: 1\n\n");
  });

  it("drops a client whose unread backlog passes the bound, instead of buffering without limit", async () => {
    const { response, subscriber, closes, isDetached } = open(1_000);
    const event = `data: ${"x".repeat(100)}\n\n`;
    for (let i = 0; i < 50; i++) subscriber.send(new SseFrame(event)); // nobody reads: the backlog grows
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
    for (let i = 0; i < 50; i++) subscriber.send(new SseFrame(`data: ${"x".repeat(100)}\n\n`));
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

/** A real node:http server whose requests are handled by `handle`. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://127.0.0.1:${port}/` };
}

const options = (over: Partial<SseStreamOptions> = {}): SseStreamOptions => ({
  contentType: "text/event-stream",
  keyDigest: "k",
  ip: "127.0.0.1",
  maxBufferedBytes: 1024,
  attach: () => () => {},
  ...over,
});

describe("startNodeSse", () => {
  it("writes the headers given, the SSE headers, the retry hint and what is sent, then ends on close()", async () => {
    const closes: string[] = [];
    let settled = false;
    const { server, url } = await serve((_req, res) => {
      void writeNodeSse(
        res,
        [["access-control-allow-origin", "*"]],
        options({
          attach: (s) => {
            s.send(new SseFrame("event: x\ndata: {}\nid: 1\n\n"));
            setImmediate(() => s.close());
            return () => {};
          },
          onClose: (reason) => closes.push(reason),
        }),
      ).then(() => (settled = true));
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

describe("startNodeSse with frames encoded once for every client", () => {
  const EVENT = 'event: x\ndata: {"k":"é"}\nid: 1\n\n'; // not ASCII: the chunk size counts bytes
  /** Sends two frames, then a third on a later turn, then closes. */
  const sendAll = (s: Subscriber) => {
    s.send(new SseFrame("data: first\n\n"));
    s.send(new SseFrame(EVENT));
    setImmediate(() => {
      s.send(new SseFrame("data: last\n\n"));
      s.close();
    });
    return () => {};
  };
  const serveAll = () => serve((_req, res) => void writeNodeSse(res, [], options({ attach: sendAll })));
  /** The raw bytes of one request's whole answer, read until the server closes. */
  const raw = (port: number, request: string) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(port, "127.0.0.1", () => socket.write(request));
      socket.on("data", (chunk) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
  const expected = `retry: 2000\n\ndata: first\n\n${EVENT}data: last\n\n`;

  it("reach an HTTP/1.1 client as the same text, in order, framed as chunks", async () => {
    const { server, port } = await serveAll();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.headers.get("transfer-encoding")).toBe("chunked");
      expect(await res.text()).toBe(expected);
      const answer = await raw(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      const body = answer.slice(answer.indexOf("\r\n\r\n") + 4);
      const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
      expect(body).toBe(`${chunk("retry: 2000\n\n")}${chunk("data: first\n\n")}${chunk(EVENT)}${chunk("data: last\n\n")}0\r\n\r\n`);
    } finally {
      server.close();
    }
  });

  it("come after what the response itself still holds back (corked)", async () => {
    const { server, url } = await serve((_req, res) => {
      void writeNodeSse(
        res,
        [],
        options({
          attach: (s) => {
            res.cork();
            res.write("data: corked\n\n");
            s.send(new SseFrame(EVENT));
            res.uncork();
            setImmediate(() => s.close());
            return () => {};
          },
        }),
      );
    });
    try {
      const res = await fetch(url);
      expect(await res.text()).toBe(`retry: 2000\n\ndata: corked\n\n${EVENT}`);
    } finally {
      server.close();
    }
  });

  it("reach an HTTP/1.0 client unframed, and a HEAD request gets no body", async () => {
    const { server, port } = await serveAll();
    try {
      const answer = await raw(port, "GET / HTTP/1.0\r\nHost: x\r\n\r\n");
      expect(answer).not.toMatch(/transfer-encoding/i);
      expect(answer.slice(answer.indexOf("\r\n\r\n") + 4)).toBe(expected);
      const head = await raw(port, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      expect(head.startsWith("HTTP/1.1 200")).toBe(true);
      expect(head.slice(head.indexOf("\r\n\r\n") + 4)).toBe("");
    } finally {
      server.close();
    }
  });
});
