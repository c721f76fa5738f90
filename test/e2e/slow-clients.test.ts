/**
 * Clients that open an event stream and then never read: real sockets against the real server.
 * The server must cut them off (closing the socket, not just the stream) and keep counting
 * each toward --max-streams-per-ip for as long as its socket lives; streams opened through h3
 * and on the Node fast path alike.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { loadInlineConfig } from "../../src/config/index.js";
import { EventHub } from "../../src/events/hub.js";
import { createApp } from "../../src/http/app.js";
import { listenApp, type Listening } from "../../src/http/listen.js";
import { silentLogger } from "../../src/log/logger.js";
import { createSnapshot } from "../../src/store/snapshot.js";
import { FlagStore } from "../../src/store/store.js";

const KEY = "slow-key-0123456789";
const MAX_BUFFERED = 64 * 1024;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(maxStreamsPerIp: number, withFastPath: boolean) {
  const load = await loadInlineConfig({ dev: { apiKey: KEY, flags: { a: { variants: { on: true }, defaultVariant: "on" } } } });
  const { config, flags } = load.environments.get("dev")!;
  const store = new FlagStore();
  store.replace([createSnapshot(config, flags, KEY)]);
  const hub = new EventHub();
  const { app, fastPath } = createApp({
    store,
    hub,
    logger: silentLogger,
    maxStreamsPerIp,
    maxBufferedBytes: MAX_BUFFERED,
    fastPath: withFastPath,
  });
  expect(fastPath !== undefined).toBe(withFastPath);
  const listening: Listening = await listenApp(app, { port: 0, host: "127.0.0.1", fastPath });
  cleanups.push(
    () => listening.close(),
    () => hub.close(),
  );
  return { hub, listening };
}

interface SlowClient {
  socket: Socket;
  /** The status line the server answered with. */
  status: string;
  closed: Promise<void>;
}

/** Sends the request, reads the first chunk (the status line and headers), then never reads again. */
function slowClient(port: number): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    cleanups.push(() => socket.destroy());
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.on("error", () => {}); // the reset shows up here once the client reads again
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, status: chunk.toString("latin1").split("\r\n")[0]!, closed });
    });
    socket.once("close", () => reject(new Error("closed before any answer")));
    socket.write(`GET /api/v1/flags/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\nAccept: text/event-stream\r\n\r\n`);
  });
}

const connections = (listening: Listening) =>
  new Promise<number>((resolve, reject) => listening.server.getConnections((error, n) => (error ? reject(error) : resolve(n))));

async function until(condition: () => boolean | Promise<boolean>, what: string, step: () => unknown = () => {}) {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await step();
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe.each([
  ["through h3", false],
  ["on the Node fast path", true],
])("a client that stops reading its event stream, opened %s", (_, withFastPath) => {
  it("is cut off with its socket, and counts toward --max-streams-per-ip until the socket is gone", async () => {
    const limit = 4;
    const { hub, listening } = await serve(limit, withFastPath);
    const clients = await Promise.all(Array.from({ length: limit }, () => slowClient(listening.port)));
    expect(clients.map((c) => c.status)).toEqual(Array(limit).fill("HTTP/1.1 200 OK"));

    // The limit holds while they are open.
    const refused = await slowClient(listening.port);
    expect(refused.status).toBe("HTTP/1.1 429 Too Many Requests");
    refused.socket.destroy();
    expect(hub.streamsFrom("127.0.0.1")).toBe(limit);

    // Nobody reads: publish until every stream's backlog passes the bound.
    const big = `{"padding":"${"x".repeat(128 * 1024)}"}`;
    await until(
      () => hub.streamCount === 0,
      "the slow streams to be dropped",
      () => hub.channel("dev", "events").publish([{ name: "flag-updated", data: big }]),
    );

    // The server closed the sockets: each client, reading again, finds its connection reset/ended.
    for (const client of clients) client.socket.resume();
    await Promise.all(clients.map((c) => c.closed));
    await until(async () => (await connections(listening)) === 0, "the server to hold no connection");
    expect(hub.streamsFrom("127.0.0.1")).toBe(0);

    // And the address may open streams again.
    const fresh = await slowClient(listening.port);
    expect(fresh.status).toBe("HTTP/1.1 200 OK");
    expect(hub.streamsFrom("127.0.0.1")).toBe(1);
  });

  it("releases the address once the server ends the stream", async () => {
    const { hub, listening } = await serve(1, withFastPath);
    const client = await slowClient(listening.port);
    expect(client.status).toBe("HTTP/1.1 200 OK");
    hub.closeStreams("dev"); // as when the key that opened it is revoked
    client.socket.resume();
    await until(() => hub.streamsFrom("127.0.0.1") === 0, "the address to be released");
    expect((await slowClient(listening.port)).status).toBe("HTTP/1.1 200 OK");
  });
});
