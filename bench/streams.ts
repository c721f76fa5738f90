/**
 * Event streams: flagserve beside a bare node:http server that writes an SSE frame to every open
 * response when node:fs.watch reports a change of its file (bench/baseline-sse.mjs). Both servers
 * run for the whole bench, each watching a file in its own directory, and the edits alternate
 * between them (the side that goes first alternating too), so that whatever else the machine does
 * weighs on both alike. Each side's clients are raw node:net connections in a child process of
 * their own (bench/stream-clients.ts, the same code for both), which also writes the file, so that
 * the write and every receipt are timed on one clock. A latency is from just before the client
 * process starts writing the file to a stream's receipt of the first `flag-updated` after it.
 *
 *   latency  edit -> `flag-updated` on one stream, p50/p99 over --latency-edits edits per side
 *   open     opening --streams streams, --concurrency handshakes at a time: total time (in ten
 *            steps, the sides taking turns)
 *   memory   server RSS after opening them minus before, per stream
 *   fanout   one edit -> `flag-updated` on every one of the --streams streams: p50, p99 and last
 *            stream (the latest receipt of all) of each edit, median over --edits edits per side;
 *            and the server's CPU time (user + system, /proc) from just before each edit to the
 *            end of the pause after it, mean
 *
 *   npm run bench:streams                                   # 10 000 streams (raises ulimit -n)
 *   npm run bench:streams -- --streams 500 --edits 3 --latency-edits 10   # a quick check
 *   npm run bench:streams -- --only latency                 # some parts only
 *
 * flagserve runs with --quiet and --heartbeat 3600 (the baseline sends no heartbeat, and one
 * would land in some measurement, on either side); --logs runs it with its default logging (a
 * line per stream opened and closed), drained through a pipe. Each side needs --streams + 64 open
 * files per process.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  benchFile,
  cpuMicrosOf,
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
  streamClients,
  stop,
  withTempDir,
  type Started,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "256" },
    edits: { type: "string", default: "11" },
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
  fanout?: { p50: number; p99: number; last: number; cpu: number };
}

type Clients = ReturnType<typeof streamClients>;

async function openStreams(clients: Clients, port: string, count: number): Promise<number> {
  const opened = await clients.ask<{ ms: number; failed: number }>({
    type: "open",
    port: Number(port),
    path: EVENTS_PATH,
    key: KEY,
    count,
    concurrency: Number(values.concurrency),
  });
  if (opened.failed > 0) throw new Error(`${opened.failed} of ${count} streams could not be opened`);
  return opened.ms;
}

/** Per-stream latencies of one edit; every stream must get the event. */
async function edit(clients: Clients, file: string, i: number): Promise<number[]> {
  await clients.ask({ type: "prepare", file, content: fileFor(i) });
  const { latencies } = await clients.ask<{ latencies: number[] }>({ type: "edit", timeoutMs: 30_000 });
  const missing = latencies.filter((l) => l < 0).length;
  if (missing > 0) throw new Error(`${missing} of ${latencies.length} streams got no flag-updated within 30 s of edit ${i} (${file})`);
  return latencies;
}

// ---- both sides, side by side ----------------------------------------------------------------

interface Side {
  server: Started;
  port: string;
  /** The file this side's server watches (each side has its own directory). */
  file: string;
  figures: Figures;
  clients?: Clients;
}

async function startSide(start: () => Promise<Started>, file: string): Promise<Side> {
  await writeFile(file, fileFor(0));
  const server = await start();
  return { server, port: new URL(server.url).port, file, figures: {} };
}

let editCount = 0;

/**
 * One edit per side in turn, `rounds` times, the side that goes first alternating, so that
 * whatever else the machine does at the time weighs on both alike; `pause` ms after each. Also
 * gives the server's CPU time (ms) from the edit to the end of the pause after it.
 */
async function editInTurns(
  sides: Side[],
  rounds: number,
  pauseMs: number,
  record: (side: Side, latencies: number[], cpuMs: number) => void,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const cpuBefore = cpuMicrosOf(side.server.child.pid!);
      const latencies = await edit(side.clients!, side.file, ++editCount);
      await pause(pauseMs);
      record(side, latencies, (cpuMicrosOf(side.server.child.pid!) - cpuBefore) / 1000);
    }
  }
}

async function measureLatency(sides: Side[]): Promise<void> {
  const samples = new Map<Side, number[]>(sides.map((side) => [side, []]));
  for (const side of sides) {
    side.clients = streamClients();
    await openStreams(side.clients, side.port, 1);
  }
  await editInTurns(sides, Number(values["latency-edits"]), 50, (side, latencies) => samples.get(side)!.push(latencies[0]!));
  for (const side of sides) {
    await side.clients!.close();
    const list = samples.get(side)!;
    side.figures.latency = { p50: percentile(list, 50), p99: percentile(list, 99) };
  }
}

/** Opening is timed in this many steps per side, the sides taking turns. */
const OPEN_STEPS = 10;

/**
 * Opens --streams streams to each side (each from its own client process) in OPEN_STEPS steps,
 * the sides taking turns (alternating, the baseline first), so that a busy moment
 * of the machine weighs on both; a side's time is the sum of its steps. Then the RSS per stream.
 */
async function openInTurns(sides: Side[]): Promise<void> {
  for (const side of sides) {
    side.clients = streamClients();
    side.figures.openMs = 0;
  }
  await pause(500);
  const before = sides.map((side) => memoryOf(side.server.child.pid!).rss);
  for (let step = 0; step < OPEN_STEPS; step++) {
    const count = Math.floor((N * (step + 1)) / OPEN_STEPS) - Math.floor((N * step) / OPEN_STEPS);
    if (count === 0) continue;
    for (const side of step % 2 === 0 ? [...sides].reverse() : sides)
      side.figures.openMs! += await openStreams(side.clients!, side.port, count);
  }
  await pause(1000);
  sides.forEach((side, i) => (side.figures.bytesPerStream = (memoryOf(side.server.child.pid!).rss - before[i]!) / N));
}

/** Opens the streams, then fans edits out to them. */
async function measureStreams(sides: Side[]): Promise<void> {
  await openInTurns(sides);
  if (parts.has("fanout")) {
    const perEdit = new Map<Side, { p50: number; p99: number; last: number; cpu: number }[]>(sides.map((side) => [side, []]));
    await editInTurns(sides, Number(values.edits), 500, (side, latencies, cpu) =>
      perEdit.get(side)!.push({ p50: percentile(latencies, 50), p99: percentile(latencies, 99), last: Math.max(...latencies), cpu }),
    );
    for (const [side, list] of perEdit) {
      const cpu = list.reduce((sum, x) => sum + x.cpu, 0) / list.length; // a mean: CPU time comes in 10 ms ticks
      side.figures.fanout = {
        p50: median(list.map((x) => x.p50)),
        p99: median(list.map((x) => x.p99)),
        last: median(list.map((x) => x.last)),
        cpu,
      };
    }
  }
  for (const side of sides) await side.clients!.close();
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
    row(`${what}, server CPU ms per edit (mean)`, "fan-out CPU", ours.fanout?.cpu, bare.fanout?.cpu, ms);
  }
  if (parts.has("open"))
    row(`opening ${N} streams, ${values.concurrency} at a time, s`, "open", ours.openMs, bare.openMs, (x) => (x / 1000).toFixed(2));
  if (parts.has("memory")) {
    row(`memory per open stream, KiB (RSS delta / ${N})`, "memory per stream", ours.bytesPerStream, bare.bytesPerStream, (x) =>
      (x / 1024).toFixed(1),
    );
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
  const bare = join(dir, "bare");
  await Promise.all([mkdir(flags), mkdir(bare)]);
  const logs = values.logs;
  header(`${N} streams, ${logs ? "default logging" : "--quiet"}, file edits on a local disk, loopback`);
  // No heartbeat during the run (the baseline sends none): one is a write to every stream, and it
  // would land in whichever measurement is under way, on either side.
  const extra = ["--heartbeat", "3600"];
  const sides = [
    await startSide(() => startFlagserve(flags, join(dir, "state"), { logs, extra }), join(flags, "bench.yaml")),
    await startSide(() => startNode(benchFile("baseline-sse.mjs"), [join(bare, "bench.yaml")]), join(bare, "bench.yaml")),
  ];
  try {
    if (parts.has("latency")) await measureLatency(sides);
    if (parts.has("open") || parts.has("memory") || parts.has("fanout")) await measureStreams(sides);
  } finally {
    await Promise.all(sides.map((side) => stop(side.server.child)));
  }
  report(sides[0]!.figures, sides[1]!.figures);
});
