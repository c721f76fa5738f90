/**
 * The flagd port's streams (EventStream, SyncFlags) through every door: change events, fault
 * drops, key rotation (its grace running out) and `keys revoke`, which environment a
 * selector-less EventStream hears about (only what a Resolve call on its own HTTP/2 connection
 * selected, never what its address did), a client that stops reading (cut off once it leaves
 * 4 MiB unread), the per-address cap (`--max-streams-per-ip`) on streams opened together, and a
 * client whose resets got its connection ended by Node's HTTP/2 layer (its streams let go).
 */
import { connect as connectHttp2, constants as http2Constants } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { status as grpcStatus, type ClientReadableStream, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { SyncFlagsRequestSchema } from "../../src/flagd/generated/flagd/sync/v1/sync_pb.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { DOORS, EvaluationV2, flagdClients, grpcJsSync, withSelector } from "../helpers/flagd.js";
import { freePort } from "../helpers/ports.js";
import { serveFlagsDir } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let dir: TempDir;
let server: FlagServer;
let key = "flagd-streams-key-0000000000";

const environment = (apiKey: string) => `apiKey: ${apiKey}
flags:
  bool-flag: { variants: { "on": true, "off": false }, defaultVariant: "on" }
  string-flag: { variants: { a: a, b: b }, defaultVariant: a }
`;

/** A large environment: its flag set is about 700 KB of flagd JSON. */
const BIG_KEY = "flagd-streams-big-key-0123456789";
const bigEnvironment = () => {
  const flags = Array.from(
    { length: 1500 },
    (_, i) => `  flag-${i}: { variants: { a: a, b: b }, defaultVariant: a, metadata: { note: "${"n".repeat(400)}" } }`,
  );
  return `apiKey: ${BIG_KEY}\nflags:\n${flags.join("\n")}\n`;
};

/** Reads a stream as it comes: its messages, the next one that matches, and how it ended. */
function follow<T>(stream: AsyncIterable<T>) {
  const messages: T[] = [];
  let ended: ConnectError | null | undefined;
  let notify: () => void = () => undefined;
  let changed = new Promise<void>((resolve) => (notify = resolve));
  const tick = () => {
    const done = notify;
    changed = new Promise<void>((resolve) => (notify = resolve));
    done();
  };
  void (async () => {
    try {
      for await (const message of stream) {
        messages.push(message);
        tick();
      }
      ended = null;
    } catch (error) {
      ended = ConnectError.from(error);
    }
    tick();
  })();
  return {
    messages,
    async next(matches: (message: T) => boolean, from = 0): Promise<T> {
      for (;;) {
        const found = messages.slice(from).find(matches);
        if (found) return found;
        if (ended !== undefined) throw new Error(`the stream ended (${ended?.message ?? "OK"}) before the message awaited`);
        await changed;
      }
    },
    async end(): Promise<ConnectError | null> {
      while (ended === undefined) await changed;
      return ended;
    },
  };
}

const namesFlag = (flag: string) => (m: { type: string; data?: { flags?: unknown } }) =>
  m.type === "configuration_change" && Object.keys((m.data?.flags ?? {}) as object).includes(flag);

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/test.yaml", environment(key));
  await dir.write("flags/big.yaml", bigEnvironment());
  server = await createFlagServer({ config: dir.file("flags"), flagdPort: 0, stateDir: dir.file("state") });
});

afterAll(async () => {
  await server?.close();
});

let variant = "a";
/** An override that changes string-flag: every stream of the environment hears of it. */
const changeStringFlag = () => server.overrides.set("test", "string-flag", { variant: (variant = variant === "a" ? "b" : "a") });

describe.each(DOORS)("streams through %s", (door) => {
  it("EventStream: provider_ready, then a change names the changed flag; SyncFlags sends the new flag set", async () => {
    const clients = flagdClients(door, server.flagdPort!);
    const abort = new AbortController();
    const events = follow(clients.v2.eventStream({}, { ...withSelector(key), signal: abort.signal }));
    const sync = follow(clients.sync.syncFlags({}, { ...withSelector(key), signal: abort.signal }));
    expect(await events.next(() => true)).toMatchObject({ type: "provider_ready" });
    await sync.next(() => true);
    await changeStringFlag();
    expect((await events.next(namesFlag("string-flag"))).data).toEqual({ flags: { "string-flag": { type: "update" } } });
    const set = await sync.next((m) => JSON.parse(m.flagConfiguration).flags["string-flag"].defaultVariant === variant, 1);
    expect(JSON.parse(set.flagConfiguration).flags["bool-flag"]).toMatchObject({ defaultVariant: "on" });
    abort.abort();
  });

  it("a drop rule ends the streams with UNAVAILABLE", async () => {
    const clients = flagdClients(door, server.flagdPort!);
    const events = follow(clients.v2.eventStream({}, withSelector(key)));
    const sync = follow(clients.sync.syncFlags({}, withSelector(key)));
    await Promise.all([events.next(() => true), sync.next(() => true)]);
    server.setFaults([
      { route: "flagd-events", ratio: 1, drop: true },
      { route: "flagd-sync", ratio: 1, drop: true },
    ]);
    server.setFaults([]);
    for (const ended of [await events.end(), await sync.end()]) {
      expect(ended?.code).toBe(Code.Unavailable);
      expect(ended?.rawMessage).toMatch(/^injected fault: flagd-(events|sync) dropped$/);
    }
  });

  it("keys revoke ends the streams opened with a replaced key at once; the grace kept them open till then", async () => {
    const clients = flagdClients(door, server.flagdPort!);
    const old = key;
    const events = follow(clients.v2.eventStream({}, withSelector(old)));
    const sync = follow(clients.sync.syncFlags({}, withSelector(old)));
    await Promise.all([events.next(() => true), sync.next(() => true)]);
    key = `${old.slice(0, -1)}${Number(old.at(-1)) + 1}`;
    await dir.write("flags/test.yaml", environment(key));
    await until("the new key", () => server.keys.test === key);
    await changeStringFlag(); // the old key is in its grace: its streams still hear of changes
    await events.next(namesFlag("string-flag"));

    const revoke = await fetch(`${server.url}/api/v1/admin/keys/test/revoke-old`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(await revoke.json()).toEqual({ environment: "test", revoked: 1 });
    for (const ended of [await events.end(), await sync.end()]) {
      expect(ended?.code).toBe(Code.Unauthenticated);
      expect(ended?.rawMessage).toMatch(/the selector no longer selects this environment/);
    }
  });
});

describe("a rotated key's grace", () => {
  it("ends the streams opened with the old key when it runs out, with no change to wait for", async () => {
    const graceDir = await tempDir();
    const old = "flagd-grace-key-00000000000";
    await graceDir.write("flags/test.yaml", environment(old));
    const graced = await createFlagServer({
      config: graceDir.file("flags"),
      flagdPort: 0,
      stateDir: graceDir.file("state"),
      keyGraceSeconds: 1,
    });
    try {
      const streams = DOORS.flatMap((door) => {
        const clients = flagdClients(door, graced.flagdPort!);
        return [follow(clients.v2.eventStream({}, withSelector(old))), follow(clients.sync.syncFlags({}, withSelector(old)))];
      });
      await Promise.all(streams.map((stream) => stream.next(() => true)));
      const rotated = "flagd-grace-key-11111111111";
      await graceDir.write("flags/test.yaml", environment(rotated));
      await until("the new key", () => graced.keys.test === rotated);
      const ended = await Promise.race([
        Promise.all(streams.map((stream) => stream.end())),
        sleep(5_000).then(() => "still open 5 s after a grace of 1 s"),
      ]);
      expect(ended).toEqual(streams.map(() => expect.objectContaining({ code: Code.Unauthenticated })));
    } finally {
      await graced.close();
    }
  });
});

describe("an EventStream opened without a selector (flagd's RPC provider opens it so)", () => {
  /** A gRPC client whose one HTTP/2 connection comes from `localPort`; `reset()` ends it with a TCP reset (no TIME_WAIT: the port is free again at once). */
  function clientFrom(localPort: number) {
    let socket: Socket | undefined;
    const transport = createGrpcTransport({
      baseUrl: `http://127.0.0.1:${server.flagdPort}`,
      nodeOptions: { createConnection: () => (socket = connectTcp({ host: "127.0.0.1", port: server.flagdPort!, localPort })) },
    });
    return { v2: createClient(EvaluationV2, transport), reset: () => socket?.resetAndDestroy() };
  }

  it("hears of an environment only once a Resolve call on its own HTTP/2 connection selected it", async () => {
    const client = clientFrom(await freePort());
    const abort = new AbortController();
    const events = follow(client.v2.eventStream({}, { signal: abort.signal }));
    await events.next(() => true);
    await changeStringFlag();
    await client.v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector(key)); // binds it
    await changeStringFlag();
    await events.next(namesFlag("string-flag"));
    expect(events.messages.filter((m) => m.type === "configuration_change")).toHaveLength(1);
    abort.abort();
  });

  it("is never bound by an address: a Resolve call from the same address and port on an earlier connection tells it nothing", async () => {
    const port = await freePort();
    const earlier = clientFrom(port);
    await earlier.v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector(key));
    earlier.reset();

    const later = clientFrom(port); // same address, same port, another connection
    const abort = new AbortController();
    const unkeyed = follow(later.v2.eventStream({}, { signal: abort.signal }));
    const keyed = follow(flagdClients("gRPC", server.flagdPort!).v2.eventStream({}, { ...withSelector(key), signal: abort.signal }));
    await Promise.all([unkeyed.next(() => true), keyed.next(() => true)]);
    await changeStringFlag();
    await keyed.next(namesFlag("string-flag"));
    // A call on the unkeyed stream's connection, answered after anything sent to that stream before.
    await expect(later.v2.resolveBoolean({ flagKey: "bool-flag" })).rejects.toMatchObject({ code: Code.Unauthenticated });
    expect(unkeyed.messages).toEqual([expect.objectContaining({ type: "provider_ready" })]);
    abort.abort();
  });

  it("over HTTP/1.1 (Connect, gRPC-Web) there is no connection to bind it by: it is refused, saying what to send", async () => {
    for (const door of ["Connect (HTTP/1.1, JSON)", "gRPC-Web (HTTP/1.1, binary)"] as const) {
      const ended = await follow(flagdClients(door, server.flagdPort!).v1.eventStream({})).end();
      expect(ended?.code).toBe(Code.Unauthenticated);
      expect(ended?.rawMessage).toMatch(/^no selector: set the provider's selector to the environment's API key \(flagd-selector\)$/);
    }
  });
});

describe("a client that stops reading", () => {
  it("is cut off once it leaves more than 4 MiB of flag sets unread (its HTTP/2 stream reset); readers that read are not", async () => {
    const session = connectHttp2(`http://127.0.0.1:${server.flagdPort}`);
    const frozen = session.request({
      ":method": "POST",
      ":path": "/flagd.sync.v1.FlagSyncService/SyncFlags",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const message = toBinary(SyncFlagsRequestSchema, create(SyncFlagsRequestSchema, { selector: BIG_KEY }));
    const envelope = Buffer.alloc(5 + message.length);
    envelope.writeUInt32BE(message.length, 1);
    envelope.set(message, 5);
    frozen.end(envelope); // and not read: no "data" listener, so the client's flow-control window stays shut
    frozen.on("error", () => undefined);
    const reset = new Promise<string>((resolve) => frozen.once("close", () => resolve(`reset ${frozen.rstCode}`)));
    await new Promise((resolve) => frozen.once("response", resolve));

    const reading = follow(flagdClients("gRPC", server.flagdPort!).sync.syncFlags({}, withSelector(BIG_KEY)));
    const bytes = Buffer.byteLength((await reading.next(() => true)).flagConfiguration);
    expect(bytes).toBeGreaterThan(600_000);
    // Eight new flag sets, each heard by the reader that reads: 6 MB for the frozen one, past its 4 MiB.
    for (let i = 1; i <= 8; i++) {
      const variant = i % 2 === 1 ? "b" : "a";
      await server.overrides.set("big", "flag-0", { variant });
      await reading.next((m) => JSON.parse(m.flagConfiguration).flags["flag-0"].defaultVariant === variant, i);
    }
    // Reset by now; were it open, reading would give it all nine flag sets.
    let received = 0;
    frozen.on("data", (chunk: Buffer) => (received += chunk.length));
    const outcome = await Promise.race([
      reset,
      until("all nine flag sets", () => received >= 9 * bytes, 10_000).then(() => "all read, still open"),
    ]);
    session.destroy();
    expect(outcome).toBe(`reset ${http2Constants.NGHTTP2_ENHANCE_YOUR_CALM}`); // gRPC clients report it as RESOURCE_EXHAUSTED
    expect(received).toBeLessThan(9 * bytes);
    // The reader that reads goes on.
    await server.overrides.set("big", "flag-0", { variant: "b" });
    await reading.next((m) => JSON.parse(m.flagConfiguration).flags["flag-0"].defaultVariant === "b", 9);
    await server.overrides.clear("big", "flag-0");
  });
});

describe("--max-streams-per-ip", () => {
  it("counts streams opened together: with a latency fault, N+k opened at once leave N open, the rest refused", async () => {
    const limited = await serveFlagsDir(dir, { flagdPort: 0, maxStreamsPerIp: 2, stateDir: dir.file("state-limited") });
    try {
      // Every stream waits out the latency before it is registered: all of them are waiting at once.
      limited.faults.set([{ route: "flagd-sync", ratio: 1, latencyMs: 300 }]);
      const { sync } = flagdClients("gRPC", limited.flagdPort!);
      const abort = new AbortController();
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () =>
          sync
            .syncFlags({}, { ...withSelector(key), signal: abort.signal })
            [Symbol.asyncIterator]()
            .next()
            .then(
              () => "open",
              (error: unknown) => ConnectError.from(error),
            ),
        ),
      );
      abort.abort();
      expect(outcomes.filter((outcome) => outcome === "open")).toHaveLength(2);
      const refused = outcomes.filter((outcome): outcome is ConnectError => outcome instanceof ConnectError);
      expect(refused).toHaveLength(3);
      for (const error of refused) {
        expect(error.code).toBe(Code.ResourceExhausted);
        expect(error.rawMessage).toMatch(/too many open streams from 127\.0\.0\.1 \(at most 2\)/);
      }
    } finally {
      await limited.close();
    }
  });
});

describe("a client that resets streams by the thousand on one connection", () => {
  it("has that connection closed once Node's HTTP/2 layer ends it (past 1000 resets), and its open streams let go", async () => {
    const resetting = await serveFlagsDir(dir, { flagdPort: 0, stateDir: dir.file("state-resets") });
    const client = grpcJsSync(resetting.flagdPort!);
    const openStreams = async () =>
      Number(/^flagserve_flagd_streams (\d+)$/m.exec(await (await fetch(`${resetting.url}/metrics`)).text())?.[1]);
    /** A call's first flag set, or the error it ended with. */
    const first = (call: ClientReadableStream<unknown>) =>
      new Promise((resolve) => {
        call.once("data", resolve);
        call.on("error", resolve);
      });
    try {
      const kept = client.syncFlags(key);
      let keptError: ServiceError | undefined;
      kept.on("error", (error: ServiceError) => (keptError = error));
      await first(kept);
      // Beside it, on the same connection, streams opened and cancelled 200 at a time: in-process
      // providers started and closed by the hundred over one pooled connection.
      for (let round = 0; keptError === undefined && round < 20; round++) {
        const calls = Array.from({ length: 200 }, () => client.syncFlags(key));
        await Promise.all(calls.map(first));
        for (const call of calls) call.cancel();
        await sleep(100);
      }
      // nghttp2's guard against rapid-reset floods ended the connection: GOAWAY (INTERNAL_ERROR).
      expect(keptError?.code).toBe(grpcStatus.INTERNAL);
      // The server lets go of the connection, and of the stream still open on it.
      await until("no flagd stream left open on the server", async () => (await openStreams()) === 0, 15_000);
      // The client goes on, on a new connection.
      const again = client.syncFlags(key);
      expect(await first(again)).toHaveProperty("flagConfiguration");
      again.cancel();
    } finally {
      client.close();
      await resetting.close();
    }
  }, 40_000);
});
