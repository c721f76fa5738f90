/**
 * HTTP throughput of flagserve beside a bare node:http server (bench/baseline-server.mjs) that
 * reads the request body and answers with the very bytes flagserve gave (status, headers, body),
 * in the same run, on loopback. Each row runs both servers one after the other under the same
 * load, `--runs` times; the figures are medians and the ratio is flagserve / baseline.
 *
 *   npm run bench                                  # 10 s per measurement, 3 runs, 50 connections
 *   npm run bench -- --duration 2 --runs 1 --warmup 1   # a quick check
 *
 * Before each row both servers get `--warmup` seconds of the same load (not counted).
 *
 * Rows: one targeted flag; evaluate-all (the shared 100-flag fixture) for one context; the same
 * for `--contexts` rotating contexts, a different body per request (the baseline reads each body
 * and answers with flagserve's bytes for the first context: HTTP cost only, no evaluation); and
 * evaluate-all revalidated with If-None-Match (304).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { benchContexts, benchFile, benchYaml, header, KEY, median, printRatios, printTable, ratio, startFlagserve, startNode, stop, withTempDir } from "./lib.js";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    runs: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
    contexts: { type: "string", default: "10000" },
  },
});
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const runs = Number(values.runs);
const connections = Number(values.connections);

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

async function load(url: string, row: Row, seconds = duration) {
  let next = 0;
  const request = { method: "POST" as const, path: row.path, headers: { "content-type": "application/json", "x-api-key": KEY, ...row.headers } };
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      row.bodies.length === 1
        ? { ...request, body: row.bodies[0] }
        : { ...request, setupRequest: (req: object) => ({ ...req, body: row.bodies[next++ % row.bodies.length] }) },
    ],
  });
  const codes = Object.keys(result.statusCodeStats ?? {}).map(Number);
  if (codes.some((code) => code !== row.status)) throw new Error(`${row.name}: expected only ${row.status}, got ${JSON.stringify(result.statusCodeStats)}`);
  if (result.errors + result.timeouts > 0) throw new Error(`${row.name}: ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

/** flagserve's exact answer to the row's first request, for the baseline to repeat. */
async function capture(url: string, row: Row): Promise<string> {
  const res = await fetch(`${url}${row.path}`, { method: "POST", headers: { "x-api-key": KEY, ...row.headers }, body: row.bodies[0] });
  if (res.status !== row.status) throw new Error(`${row.name}: flagserve answered ${res.status}, expected ${row.status}`);
  const headers: Record<string, string> = {};
  for (const [k, v] of res.headers) if (!["date", "connection", "keep-alive", "transfer-encoding"].includes(k)) headers[k] = v;
  return JSON.stringify({ status: res.status, headers, body: await res.text() });
}

async function measure(flagserveUrl: string, row: Row) {
  const baseline = await startNode(benchFile("baseline-server.mjs"), [await capture(flagserveUrl, row)]);
  const ours: { rps: number; p99: number }[] = [];
  const theirs: { rps: number; p99: number }[] = [];
  try {
    if (warmup > 0) await Promise.all([load(flagserveUrl, row, warmup), load(baseline.url, row, warmup)]);
    for (let run = 0; run < runs; run++) {
      ours.push(await load(flagserveUrl, row));
      theirs.push(await load(baseline.url, row));
    }
  } finally {
    await stop(baseline.child);
  }
  const rps = [median(ours.map((r) => r.rps)), median(theirs.map((r) => r.rps))] as const;
  return { rps, p99: [median(ours.map((r) => r.p99)), median(theirs.map((r) => r.p99))] as const, ratio: ratio(rps[0], rps[1]) };
}

await withTempDir(async (dir) => {
  const file = join(dir, "bench.yaml");
  await writeFile(file, benchYaml(100));
  const flagserve = await startFlagserve(file, join(dir, "state"));
  try {
    const contexts = benchContexts(Number(values.contexts)).map((context) => JSON.stringify({ context }));
    const one = [JSON.stringify({ context: { targetingKey: "user-42", email: "ada@example.com", country: "DE", plan: "pro", version: "3.1.4" } })];
    const etag = (await fetch(`${flagserve.url}${ALL}`, { method: "POST", headers: { "x-api-key": KEY }, body: one[0] })).headers.get("etag")!;
    const rows: Row[] = [
      { name: "single flag, targeted", label: "single", path: "/ofrep/v1/evaluate/flags/flag-001", bodies: one, headers: {}, status: 200 },
      { name: "evaluate-all, 100 flags, same context", label: "all", path: ALL, bodies: one, headers: {}, status: 200 },
      { name: `evaluate-all, 100 flags, ${contexts.length} rotating contexts`, label: "rotating", path: ALL, bodies: contexts, headers: {}, status: 200 },
      { name: "evaluate-all, 304 revalidation", label: "304", path: ALL, bodies: one, headers: { "if-none-match": etag }, status: 304 },
    ];

    header(`${connections} connections, ${duration} s per measurement, median of ${runs} run(s), loopback`);
    const table: (string | number)[][] = [];
    const ratios: [string, string][] = [];
    for (const row of rows) {
      const m = await measure(flagserve.url, row);
      table.push([row.name, Math.round(m.rps[0]), Math.round(m.rps[1]), m.ratio, m.p99[0], m.p99[1]]);
      ratios.push([row.label, m.ratio]);
    }
    printTable(["scenario", "flagserve req/s", "baseline req/s", "ratio", "flagserve p99 ms", "baseline p99 ms"], table);
    printRatios("bench (req/s, flagserve / bare node:http)", ratios);
  } finally {
    await stop(flagserve.child);
  }
});
