/** A real HTTP receiver on loopback, standing in for Slack or a webhook consumer. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it came over the wire. */
  raw: Buffer;
  json(): any;
  at: number;
}

/** What to do with one request: answer with a status (and headers), or never answer. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | "hang";

export interface Receiver {
  url: string;
  received: Received[];
  /** Replies used in order for the next requests; afterwards 200 "ok". */
  replies: Reply[];
  /** Requests still waiting for an answer (those told to hang). */
  open(): number;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const replies: Reply[] = [];
  const hanging = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      received.push({
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        raw,
        json: () => JSON.parse(raw.toString("utf8")),
        at: Date.now(),
      });
      const reply = replies.shift() ?? { status: 200, body: "ok" };
      if (reply === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
      } else {
        res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers }).end(reply.body ?? "");
      }
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    replies,
    open: () => hanging.size,
    waitFor: (count, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(received.slice(0, count));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} request(s) within ${timeoutMs} ms, got ${received.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
