/**
 * The flagd port under load, as flagd's providers use it: gRPC calls from one @grpc/grpc-js
 * channel (the RPC provider's client) with many calls in flight, and a change fanned out to many
 * SyncFlags streams (in-process providers), on the shared 100-flag fixture; and Connect with JSON
 * over HTTP/1.1 (the web provider's way), with keep-alive connections.
 *
 *   npm run bench:flagd                                     # 8 rounds of 2 s per row
 *   npm run bench:flagd -- --rounds 2 --duration 1 --warmup 1   # a quick check
 *   npm run bench:flagd -- --against ../main/bin/flagserve.js  # beside another build, in alternating rounds
 *
 * With `--against`, each row runs this build and the other in short alternating rounds under the
 * same load (the other build's rows that it does not serve are left out), and the ratio is the
 * median over rounds of this build's figure over the other's: two measurements a few seconds apart
 * see the same machine. Beside calls/s, the server's CPU time per call (user + system, /proc).
 */
import { writeFile } from "node:fs/promises";
import { request as httpRequest, Agent } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, type Client } from "@grpc/grpc-js";
import {
  ResolveAllRequestSchema,
  ResolveAllResponseSchema,
  ResolveBooleanRequestSchema,
  ResolveBooleanResponseSchema,
} from "../src/flagd/generated/flagd/evaluation/v2/evaluation_pb.js";
import { SyncFlagsRequestSchema, SyncFlagsResponseSchema } from "../src/flagd/generated/flagd/sync/v1/sync_pb.js";
import {
  BIN,
  benchContexts,
  cpuMicrosOf,
  environmentYaml,
  flagKey,
  header,
  KEY,
  median,
  ms,
  percentile,
  printRatios,
  printTable,
  startNode,
  stop,
  withTempDir,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "2" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "8" },
    inflight: { type: "string", default: "32" },
    streams: { type: "string", default: "200" },
    against: { type: "string" },
  },
});
const duration = Number(values.duration) * 1000;
const warmup = Number(values.warmup) * 1000;
const rounds = Number(values.rounds);
const inflight = Number(values.inflight);
const streamCount = Number(values.streams);

interface Server {
  name: string;
  pid: number;
  url: string;
  flagdPort: number;
}

/** A port nothing listens on right now (bound on 127.0.0.1, then released). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

async function startServer(bin: string, name: string, file: string, stateDir: string): Promise<Server & { stop(): Promise<void> }> {
  const flagdPort = await freePort();
  const started = await startNode(bin, [file, "--port", "0", "--flagd-port", String(flagdPort), "--quiet", "--state-dir", stateDir]);
  return { name, pid: started.child.pid!, url: started.url, flagdPort, stop: () => stop(started.child) };
}

/** A unary gRPC method by its path, sending and reading the generated messages' bytes. */
function grpcMethod<I extends DescMessage, O extends DescMessage>(path: string, input: I, output: O) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (message: MessageInitShape<I>) => Buffer.from(toBinary(input, create(input, message))),
    requestDeserialize: (bytes: Buffer) => fromBinary(input, bytes),
    responseSerialize: () => Buffer.alloc(0),
    responseDeserialize: (bytes: Buffer) => fromBinary(output, bytes),
  };
}

const Evaluation = makeGenericClientConstructor(
  {
    ResolveBoolean: grpcMethod("/flagd.evaluation.v2.Service/ResolveBoolean", ResolveBooleanRequestSchema, ResolveBooleanResponseSchema),
    ResolveAll: grpcMethod("/flagd.evaluation.v2.Service/ResolveAll", ResolveAllRequestSchema, ResolveAllResponseSchema),
  },
  "flagd",
);
const Sync = makeGenericClientConstructor(
  {
    SyncFlags: {
      path: "/flagd.sync.v1.FlagSyncService/SyncFlags",
      requestStream: false,
      responseStream: true,
      requestSerialize: (message: MessageInitShape<typeof SyncFlagsRequestSchema>) =>
        Buffer.from(toBinary(SyncFlagsRequestSchema, create(SyncFlagsRequestSchema, message))),
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (bytes: Buffer) => fromBinary(SyncFlagsResponseSchema, bytes),
    },
  },
  "flagd",
);

const contexts = benchContexts(1000);
const selector = () => {
  const metadata = new Metadata();
  metadata.set("flagd-selector", KEY);
  return metadata;
};

interface Measured {
  rate: number;
  p99: number;
  /** The server's CPU per call, µs. */
  cpu: number;
}

/** Keeps `inflight` calls going for `ms`; each call's latency counted. */
async function keepBusy(server: Server, call: (i: number) => Promise<void>, forMs: number): Promise<Measured> {
  const latencies: number[] = [];
  const cpuBefore = cpuMicrosOf(server.pid);
  const start = performance.now();
  let i = 0;
  const worker = async () => {
    while (performance.now() - start < forMs) {
      const t = performance.now();
      await call(i++);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  const seconds = (performance.now() - start) / 1000;
  return {
    rate: latencies.length / seconds,
    p99: percentile(latencies, 99),
    cpu: (cpuMicrosOf(server.pid) - cpuBefore) / latencies.length,
  };
}

interface Row {
  name: string;
  label: string;
  /** A load on one server: calls for `forMs`; undefined when the server does not serve the row. */
  run(server: Server, forMs: number): Promise<Measured | undefined>;
}

function grpcRow(name: string, label: string, method: "ResolveBoolean" | "ResolveAll", request: (i: number) => object): Row {
  const clients = new Map<Server, Client>();
  return {
    name,
    label,
    async run(server, forMs) {
      let client = clients.get(server);
      if (!client) clients.set(server, (client = new Evaluation(`127.0.0.1:${server.flagdPort}`, credentials.createInsecure())));
      const unary = (client as unknown as Record<string, (r: object, m: Metadata, cb: (e: Error | null) => void) => void>)[method]!.bind(
        client,
      );
      return keepBusy(
        server,
        (i) => new Promise<void>((resolve, reject) => unary(request(i), selector(), (error) => (error ? reject(error) : resolve()))),
        forMs,
      );
    },
  };
}

function connectRow(): Row {
  const agent = new Agent({ keepAlive: true, maxSockets: inflight });
  const post = (server: Server, body: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `http://127.0.0.1:${server.flagdPort}/flagd.evaluation.v1.Service/ResolveAll`,
        { method: "POST", agent, headers: { "content-type": "application/json", "flagd-selector": KEY } },
        (res) => {
          res.resume().on("end", () => resolve(res.statusCode!));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return {
    name: "Connect JSON, HTTP/1.1: ResolveAll, 100 flags (the web provider)",
    label: "connect-all",
    async run(server, forMs) {
      const probe = await post(server, "{}").catch(() => 0);
      if (probe !== 200) return undefined; // a build that does not speak Connect
      return keepBusy(
        server,
        async (i) => {
          const status = await post(server, JSON.stringify({ context: contexts[i % contexts.length] }));
          if (status !== 200) throw new Error(`Connect ResolveAll answered ${status}`);
        },
        forMs,
      );
    },
  };
}

/** How long the streams may take to open, or an edit to reach them all, before the row fails: a benchmark stops by itself. */
const FAN_OUT_DEADLINE_MS = 10_000;

function withinDeadline<T>(promise: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what()} after ${FAN_OUT_DEADLINE_MS / 1000} s`)), FAN_OUT_DEADLINE_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** `streamCount` SyncFlags streams; each round, an edit of the file and the time until every stream has the new flag set. */
function fanOutRow(file: string): Row {
  let version = 0;
  return {
    name: `SyncFlags: an edit reaching ${streamCount} streams (ms, not calls/s)`,
    label: "sync-fan-out",
    async run(server, forMs) {
      // A connection of its own, closed with the client. grpc-js pools connections by address: it
      // would be the gRPC rows' one, which their clients keep open, and every round's cancels would
      // add up on it until nghttp2's guard against rapid-reset floods ends it (past 1000 resets).
      const client = new Sync(`127.0.0.1:${server.flagdPort}`, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
      const waiting = new Set<(set: string) => void>();
      const calls = Array.from({ length: streamCount }, () =>
        (client as unknown as { SyncFlags(r: object, m: Metadata): NodeJS.EventEmitter & { cancel(): void } }).SyncFlags(
          { selector: KEY },
          selector(),
        ),
      );
      // A stream that fails fails the row at once, saying why (the cancels at its end are its own).
      let cancelling = false;
      const failed = new Promise<never>((_, reject) => {
        for (const call of calls)
          call.on("error", (error: Error) => cancelling || reject(new Error(`a SyncFlags stream failed: ${error.message}`)));
      });
      let opened = 0;
      await withinDeadline(
        Promise.race([Promise.all(calls.map((call) => new Promise((resolve) => call.once("data", resolve)).then(() => opened++))), failed]),
        () => `${opened} of ${streamCount} SyncFlags streams had their first flag set`,
      );
      for (const call of calls)
        call.on("data", (message: { flagConfiguration: string }) => waiting.forEach((w) => w(message.flagConfiguration)));
      const times: number[] = [];
      const cpuBefore = cpuMicrosOf(server.pid);
      const start = performance.now();
      while (performance.now() - start < forMs || times.length === 0) {
        const variant = version++ % 2 === 0 ? "on" : "off";
        let heard = 0;
        const all = new Promise<void>((resolve) => {
          const hear = (set: string) => {
            if (JSON.parse(set).flags[flagKey(0, 100)].defaultVariant === variant && ++heard === streamCount) {
              waiting.delete(hear);
              resolve();
            }
          };
          waiting.add(hear);
        });
        const t = performance.now();
        await writeFile(file, environmentYaml(100, variant));
        await withinDeadline(Promise.race([all, failed]), () => `an edit reached ${heard} of ${streamCount} SyncFlags streams`);
        times.push(performance.now() - t);
      }
      const cpu = (cpuMicrosOf(server.pid) - cpuBefore) / times.length;
      cancelling = true;
      for (const call of calls) call.cancel();
      client.close();
      return { rate: median(times), p99: Math.max(...times), cpu };
    },
  };
}

header(
  `flagd port: ${inflight} calls in flight (gRPC: one channel), ${rounds} rounds of ${duration / 1000} s${values.against ? `, beside ${values.against}` : ""}`,
);

await withTempDir(async (dir) => {
  const file = join(dir, "bench.yaml");
  await writeFile(file, environmentYaml(100, "off"));
  const servers = [await startServer(BIN, "this build", file, join(dir, "state"))];
  if (values.against) servers.push(await startServer(values.against, "other build", file, join(dir, "state-other")));
  const rows: Row[] = [
    grpcRow("gRPC ResolveBoolean, one flag (the RPC provider)", "grpc-single", "ResolveBoolean", (i) => ({
      flagKey: flagKey(1, 100),
      context: contexts[i % contexts.length],
    })),
    grpcRow("gRPC ResolveAll, 100 flags", "grpc-all", "ResolveAll", (i) => ({ context: contexts[i % contexts.length] })),
    connectRow(),
    fanOutRow(file),
  ];
  const table: (string | number)[][] = [];
  const ratios: [string, string][] = [];
  try {
    for (const row of rows) {
      const results = new Map<Server, Measured[]>(servers.map((s) => [s, []]));
      if (warmup > 0) for (const server of servers) await row.run(server, warmup);
      for (let round = 0; round < rounds; round++) {
        // Alternate which goes first, so neither always follows the other.
        for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
          const measured = await row.run(server, duration);
          if (measured) results.get(server)!.push(measured);
        }
      }
      const [ours, theirs] = servers.map((s) => results.get(s)!);
      const fanOut = row.label === "sync-fan-out";
      const cell = (m: Measured[]) =>
        m.length === 0
          ? ["-", "-", "-"]
          : [
              fanOut ? ms(median(m.map((r) => r.rate))) : Math.round(median(m.map((r) => r.rate))),
              ms(median(m.map((r) => r.p99))),
              Math.round(median(m.map((r) => r.cpu))),
            ];
      table.push([row.name, ...cell(ours!), ...(theirs ? cell(theirs) : [])]);
      if (theirs && theirs.length === ours!.length && ours!.length > 0) {
        // Faster is > 1 either way: calls/s over calls/s, or the other's ms over this one's.
        const perRound = ours!.map((r, i) => (fanOut ? theirs[i]!.rate / r.rate : r.rate / theirs[i]!.rate));
        ratios.push([row.label, median(perRound).toFixed(2)]);
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  const columns = ["calls/s (fan-out: median ms)", "p99 ms (fan-out: max)", "server CPU µs per call (fan-out: per edit)"];
  printTable(["row", ...columns.map((c) => `${c}, this build`), ...(servers.length > 1 ? columns.map((c) => `${c}, other`) : [])], table);
  if (ratios.length > 0) printRatios("bench:flagd (this build / other)", ratios);
});
process.exit(0);
