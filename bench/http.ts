/**
 * HTTP throughput of flagserve beside a bare node:http server (bench/baseline-server.mjs) that
 * reads the request body and answers with the very bytes flagserve gave (status, headers, body),
 * in the same run, on loopback.
 *
 *   npm run bench:http                              # 12 rounds of 2 s per server, 50 connections
 *   npm run bench:http -- --rounds 2 --duration 1 --warmup 1   # a quick check
 *   npm run bench:http -- --no-pin                  # load generator and servers share every core
 *   npm run bench:http -- --rows single,304         # some rows only (single, all, rotating, 304)
 *   npm run bench:http -- --against ../other/bin/flagserve.js   # beside another build, not the bare server
 *
 * Each row runs the two servers in short alternating rounds (flagserve then baseline, then the
 * other way round), each under the same load, after `--warmup` seconds for both (not counted).
 * The ratio is the median over rounds of flagserve / baseline within the round: how fast a
 * shared machine runs moves by tens of percent over seconds, and two measurements a few seconds
 * apart see the same machine, where medians of long runs taken apart do not.
 *
 * With `taskset` and two or more CPUs, the load generator (this process) runs on the first CPU
 * and the server under load on the second: otherwise the load generator competes with the server
 * for its core, and the figures measure the scheduler as much as the server. `--no-pin` turns it off.
 *
 * Rows: one targeted flag; evaluate-all (the shared 100-flag fixture) for one context; the same
 * for `--contexts` rotating contexts, a different body per request (the baseline reads each body
 * and answers with flagserve's bytes for the first context: HTTP cost only, no evaluation); and
 * evaluate-all revalidated with If-None-Match (304).
 *
 * With `--against`, the second server of each round is another build of flagserve serving the same
 * file (a checkout with one speed mechanism turned off, say): the ratio is then this build's
 * req/s over that one's, measured the same way.
 *
 * Beside req/s, each server's CPU time per request (user + system, from /proc), and its ratio
 * (baseline CPU / flagserve CPU, per round): what a request costs, whatever the load generator does.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import {
  benchContexts,
  benchFile,
  benchYaml,
  cpuMicrosOf,
  header,
  KEY,
  median,
  ONE_BODY,
  printRatios,
  printTable,
  replyFor,
  startFlagserve,
  startNode,
  stop,
  withTempDir,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "2" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "12" },
    connections: { type: "string", default: "50" },
    contexts: { type: "string", default: "10000" },
    "no-pin": { type: "boolean", default: false },
    rows: { type: "string", default: "single,all,rotating,304" },
    against: { type: "string" },
  },
});
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

/** Sets the CPUs every thread of a process may run on; false where that cannot be done. */
function pinTo(pid: number, cpu: number): boolean {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const pinned = !values["no-pin"] && availableParallelism() >= 2 && pinTo(process.pid, 0);
/** The CPU a server under load runs on, when pinned. */
const SERVER_CPU = 1;

/** A server onto SERVER_CPU when the load generator is pinned: a placement half done would be misreported. */
function pinServer(pid: number): void {
  if (pinned && !pinTo(pid, SERVER_CPU)) throw new Error(`cannot run the server on CPU ${SERVER_CPU} (taskset failed); run with --no-pin`);
}

interface Row {
  name: string;
  label: string;
  path: string;
  /** One body for every request, or a rotating list. */
  bodies: string[];
  headers: Record<string, string>;
  status: number;
}

const ALL = "/ofrep/v1/evaluate/flags";

interface Server {
  url: string;
  pid: number;
}

interface Measured {
  rps: number;
  p99: number;
  /** The server's CPU time per request, µs. */
  cpu: number;
}

async function load(server: Server, row: Row, seconds = duration): Promise<Measured> {
  let next = 0;
  const request = {
    method: "POST" as const,
    path: row.path,
    headers: { "content-type": "application/json", "x-api-key": KEY, ...row.headers },
  };
  const cpuBefore = cpuMicrosOf(server.pid);
  const result = await autocannon({
    url: server.url,
    connections,
    duration: seconds,
    requests: [
      row.bodies.length === 1
        ? { ...request, body: row.bodies[0] }
        : { ...request, setupRequest: (req: object) => ({ ...req, body: row.bodies[next++ % row.bodies.length] }) },
    ],
  });
  const codes = Object.keys(result.statusCodeStats ?? {}).map(Number);
  if (codes.some((code) => code !== row.status))
    throw new Error(`${row.name}: expected only ${row.status}, got ${JSON.stringify(result.statusCodeStats)}`);
  if (result.errors + result.timeouts > 0) throw new Error(`${row.name}: ${result.errors} errors, ${result.timeouts} timeouts`);
  const cpu = (cpuMicrosOf(server.pid) - cpuBefore) / result.requests.total;
  return { rps: result.requests.average, p99: result.latency.p99, cpu };
}

/** The server each round compares with: the bare node:http server answering with flagserve's bytes, or `--against`'s build. */
async function startBaseline(flagserve: Server, row: Row, file: string, dir: string) {
  if (values.against) return startNode(values.against, [file, "--port", "0", "--quiet", "--state-dir", join(dir, "against-state")]);
  return startNode(benchFile("baseline-server.mjs"), [await replyFor(flagserve.url, row.path, row.headers, row.bodies[0]!, row.status)]);
}

async function measure(flagserve: Server, row: Row, file: string, dir: string) {
  const started = await startBaseline(flagserve, row, file, dir);
  const baseline = { url: started.url, pid: started.child.pid! };
  const ours: Measured[] = [];
  const theirs: Measured[] = [];
  try {
    pinServer(baseline.pid);
    if (warmup > 0) {
      await load(flagserve, row, warmup);
      await load(baseline, row, warmup);
    }
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so neither always follows the other.
      if (round % 2 === 0) ours.push(await load(flagserve, row));
      theirs.push(await load(baseline, row));
      if (round % 2 === 1) ours.push(await load(flagserve, row));
    }
  } finally {
    await stop(started.child);
  }
  const both = (field: keyof Measured) => [median(ours.map((r) => r[field])), median(theirs.map((r) => r[field]))] as const;
  const perRound = (of: (i: number) => number) => median(ours.map((_, i) => of(i)));
  return {
    rps: both("rps"),
    p99: both("p99"),
    cpu: both("cpu"),
    ratio: perRound((i) => ours[i]!.rps / theirs[i]!.rps).toFixed(2),
    cpuRatio: perRound((i) => theirs[i]!.cpu / ours[i]!.cpu).toFixed(2),
  };
}

await withTempDir(async (dir) => {
  const file = join(dir, "bench.yaml");
  await writeFile(file, benchYaml(100));
  const started = await startFlagserve(file, join(dir, "state"));
  const flagserve = { url: started.url, pid: started.child.pid! };
  try {
    pinServer(flagserve.pid);
    const contexts = benchContexts(Number(values.contexts)).map((context) => JSON.stringify({ context }));
    const one = [ONE_BODY];
    const etag = (await fetch(`${flagserve.url}${ALL}`, { method: "POST", headers: { "x-api-key": KEY }, body: one[0] })).headers.get(
      "etag",
    )!;
    const rows: Row[] = [
      { name: "single flag, targeted", label: "single", path: "/ofrep/v1/evaluate/flags/flag-001", bodies: one, headers: {}, status: 200 },
      { name: "evaluate-all, 100 flags, same context", label: "all", path: ALL, bodies: one, headers: {}, status: 200 },
      {
        name: `evaluate-all, 100 flags, ${contexts.length} rotating contexts`,
        label: "rotating",
        path: ALL,
        bodies: contexts,
        headers: {},
        status: 200,
      },
      { name: "evaluate-all, 304 revalidation", label: "304", path: ALL, bodies: one, headers: { "if-none-match": etag }, status: 304 },
    ];

    const chosen = values.rows.split(",").map((label) => label.trim());
    const unknown = chosen.filter((label) => !rows.some((row) => row.label === label));
    if (unknown.length > 0) throw new Error(`unknown --rows ${unknown.join(", ")}: choose from ${rows.map((row) => row.label).join(", ")}`);
    const placement = pinned ? `load generator on CPU 0, servers on CPU ${SERVER_CPU}` : "not pinned";
    header(`${connections} connections, ${rounds} rounds of ${duration} s per server, medians, loopback, ${placement}`);
    const table: (string | number)[][] = [];
    const ratios: [string, string][] = [];
    for (const row of rows.filter((row) => chosen.includes(row.label))) {
      const m = await measure(flagserve, row, file, dir);
      table.push([
        row.name,
        Math.round(m.rps[0]),
        Math.round(m.rps[1]),
        m.ratio,
        m.p99[0],
        m.p99[1],
        Math.round(m.cpu[0]),
        Math.round(m.cpu[1]),
        m.cpuRatio,
      ]);
      ratios.push([row.label, m.ratio]);
    }
    if (values.against) header(`baseline: ${values.against}`);
    printTable(
      [
        "scenario",
        "flagserve req/s",
        "baseline req/s",
        "ratio",
        "flagserve p99 ms",
        "baseline p99 ms",
        "flagserve CPU µs/req",
        "baseline CPU µs/req",
        "CPU ratio",
      ],
      table,
    );
    printRatios("bench:http (req/s, flagserve / bare node:http)", ratios);
  } finally {
    await stop(started.child);
  }
});
