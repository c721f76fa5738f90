/**
 * Event streams: flagserve beside a bare node:http server that writes an SSE frame to every open
 * response when node:fs.watch reports a change of the same file (bench/baseline-sse.mjs). The
 * clients are raw node:net connections in a child process (bench/stream-clients.ts), which also
 * writes the file, so that every time is taken on one clock.
 *
 *   latency  edit -> `flag-updated` on one stream, p50/p99 over --latency-edits edits
 *   open     opening --streams streams, --concurrency handshakes at a time: total time
 *   memory   server RSS after opening them minus before, per stream
 *   fanout   one edit -> `flag-updated` on every one of the --streams streams: p50, p99 and last
 *            client over the streams, median over --edits edits
 *
 *   npm run bench:streams                                   # 10 000 streams (raises ulimit -n)
 *   npm run bench:streams -- --streams 500 --edits 2 --latency-edits 10   # a quick check
 *   npm run bench:streams -- --only latency                 # some parts only
 *
 * flagserve runs with --quiet; --logs runs it with its default logging (a line per stream opened
 * and closed), drained through a pipe. Each side needs --streams + 64 open files per process.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  benchFile,
  header,
  KEY,
  median,
  memoryOf,
  ms,
  openFileLimit,
  pause,
  percentile,
  printRatios,
  printTable,
  ratio,
  startFlagserve,
  startNode,
  stop,
  withTempDir,
  type Started,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "256" },
    edits: { type: "string", default: "5" },
    "latency-edits": { type: "string", default: "50" },
    only: { type: "string", default: "latency,open,memory,fanout" },
    logs: { type: "boolean", default: false },
  },
});
const N = Number(values.streams);
const parts = new Set(values.only.split(","));
const EVENTS_PATH = "/api/v1/flags/events";
const fileFor = (i: number) => `apiKey: ${KEY}\nflags:\n  f:\n    variants: { v: ${i} }\n    defaultVariant: v\n`;

interface Figures {
  latency?: { p50: number; p99: number };
  openMs?: number;
  bytesPerStream?: number;
  fanout?: { p50: number; p99: number; last: number };
}

// ---- the client process -----------------------------------------------------------------------

function clientProcess(): { ask<T>(msg: object): Promise<T>; close(): Promise<void> } {
  const child: ChildProcess = fork(benchFile("stream-clients.ts"), [], { execArgv: ["--import", "tsx"] });
  let pending: { resolve(reply: unknown): void; reject(error: Error): void } | undefined;
  child.on("message", (reply) => pending?.resolve(reply));
  child.on("exit", (code) => pending?.reject(new Error(`stream clients exited with ${code}`)));
  return {
    ask: <T>(msg: object) =>
      new Promise<T>((resolve, reject) => {
        pending = { resolve: (reply) => resolve(reply as T), reject };
        child.send(msg);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        pending = { resolve: () => {}, reject: () => resolve() };
        child.send({ type: "close" });
      }),
  };
}

type Clients = ReturnType<typeof clientProcess>;

async function openStreams(clients: Clients, port: string, count: number): Promise<number> {
  const opened = await clients.ask<{ ms: number; failed: number }>({
    type: "open", port: Number(port), path: EVENTS_PATH, key: KEY, count, concurrency: Number(values.concurrency),
  });
  if (opened.failed > 0) throw new Error(`${opened.failed} of ${count} streams could not be opened`);
  return opened.ms;
}

/** Per-stream latencies of one edit; every stream must get the event. */
async function edit(clients: Clients, file: string, i: number): Promise<number[]> {
  const { latencies } = await clients.ask<{ latencies: number[] }>({ type: "edit", file, content: fileFor(i), timeoutMs: 30_000 });
  const missing = latencies.filter((l) => l < 0).length;
  if (missing > 0) throw new Error(`${missing} of ${latencies.length} streams got no flag-updated within 30 s of edit ${i}`);
  return latencies;
}

// ---- one side ---------------------------------------------------------------------------------

async function measureSide(start: () => Promise<Started>, file: string): Promise<Figures> {
  await writeFile(file, fileFor(0));
  const server = await start();
  const port = new URL(server.url).port;
  const figures: Figures = {};
  let n = 0;
  try {
    if (parts.has("latency")) {
      const clients = clientProcess();
      await openStreams(clients, port, 1);
      const samples: number[] = [];
      for (let i = 0; i < Number(values["latency-edits"]); i++) {
        samples.push((await edit(clients, file, ++n))[0]!);
        await pause(50);
      }
      await clients.close();
      figures.latency = { p50: percentile(samples, 50), p99: percentile(samples, 99) };
    }
    if (parts.has("open") || parts.has("memory") || parts.has("fanout")) {
      await pause(500);
      const before = memoryOf(server.child.pid!).rss;
      const clients = clientProcess();
      figures.openMs = await openStreams(clients, port, N);
      await pause(1000);
      figures.bytesPerStream = (memoryOf(server.child.pid!).rss - before) / N;
      if (parts.has("fanout")) {
        const perEdit: { p50: number; p99: number; last: number }[] = [];
        for (let e = 0; e < Number(values.edits); e++) {
          const latencies = await edit(clients, file, ++n);
          perEdit.push({ p50: percentile(latencies, 50), p99: percentile(latencies, 99), last: Math.max(...latencies) });
          await pause(500);
        }
        figures.fanout = { p50: median(perEdit.map((x) => x.p50)), p99: median(perEdit.map((x) => x.p99)), last: median(perEdit.map((x) => x.last)) };
      }
      await clients.close();
    }
  } finally {
    await stop(server.child);
  }
  return figures;
}

// ---- report -----------------------------------------------------------------------------------

function report(ours: Figures, bare: Figures): void {
  const rows: (string | number)[][] = [];
  const ratios: [string, string][] = [];
  const row = (label: string, short: string, a: number | undefined, b: number | undefined, format: (x: number) => string) => {
    if (a === undefined || b === undefined) return;
    rows.push([label, format(a), format(b), ratio(a, b)]);
    ratios.push([short, ratio(a, b)]);
  };
  const edits = values["latency-edits"];
  row(`edit -> flag-updated, one stream, p50 ms (${edits} edits)`, "edit p50", ours.latency?.p50, bare.latency?.p50, ms);
  row(`edit -> flag-updated, one stream, p99 ms (${edits} edits)`, "edit p99", ours.latency?.p99, bare.latency?.p99, ms);
  if (parts.has("fanout")) {
    const what = `one edit to ${N} streams`;
    row(`${what}, p50 ms over streams`, "fan-out p50", ours.fanout?.p50, bare.fanout?.p50, ms);
    row(`${what}, p99 ms over streams`, "fan-out p99", ours.fanout?.p99, bare.fanout?.p99, ms);
    row(`${what}, last stream ms`, "fan-out last", ours.fanout?.last, bare.fanout?.last, ms);
  }
  if (parts.has("open")) row(`opening ${N} streams, ${values.concurrency} at a time, s`, "open", ours.openMs, bare.openMs, (x) => (x / 1000).toFixed(2));
  if (parts.has("memory")) {
    row(`memory per open stream, KiB (RSS delta / ${N})`, "memory per stream", ours.bytesPerStream, bare.bytesPerStream, (x) => (x / 1024).toFixed(1));
  }
  printTable(["row", "flagserve", "bare node:http + fs.watch", "ratio"], rows);
  printRatios("bench:streams (flagserve / bare)", ratios);
}

const limit = openFileLimit();
if (limit < N + 64) {
  console.error(
    `The open-file limit is ${limit}; ${N} streams need about ${N + 64} per process. ` +
      `Raise it (\`ulimit -n 65536\`; \`npm run bench:streams\` tries that itself) or pass --streams ${Math.max(1, limit - 64)}.`,
  );
  process.exit(1);
}

await withTempDir(async (dir) => {
  const flags = join(dir, "flags");
  await mkdir(flags);
  const file = join(flags, "bench.yaml");
  const logs = values.logs;
  header(`${N} streams, ${logs ? "default logging" : "--quiet"}, file edits on a local disk, loopback`);
  const ours = await measureSide(() => startFlagserve(flags, join(dir, "state"), { logs }), file);
  const bare = await measureSide(() => startNode(benchFile("baseline-sse.mjs"), [file]), file);
  report(ours, bare);
});
