/**
 * The first edit after start: how much longer a fresh server takes to announce its first edit
 * than its fifth. A server parses changed files in its parse worker, whose first parses are its
 * slowest (its code not yet compiled for speed); it parses its files there from its first load
 * on, so that by the first edit that work is behind it.
 *
 * Each run starts a server on one file of --flags flags, opens an event stream, and makes five
 * edits (one flag's `defaultVariant`, written in one go), the first --after ms after the server
 * answered and each next one --after ms after the last. A latency is from just before the write to
 * the receipt of `flag-updated` (bench/stream-clients.ts, which also writes the file: one clock). With --against, every
 * run also starts the other build, the two taking turns (which goes first alternating).
 *
 *   npm run bench:first-edit
 *   npm run bench:first-edit -- --against ../other/bin/flagserve.js
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  BIN,
  environmentYaml,
  header,
  KEY,
  median,
  pause,
  printRatios,
  printTable,
  ratio,
  startNode,
  stop,
  streamClients,
  withTempDir,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    flags: { type: "string", default: "1000" },
    runs: { type: "string", default: "5" },
    after: { type: "string", default: "3000" },
    against: { type: "string" },
  },
});
const FLAGS = Number(values.flags);
const RUNS = Number(values.runs);
const AFTER_MS = Number(values.after);
const EDITS = 5;

/** One fresh server's five edits: latencies in ms. */
async function run(bin: string, dir: string): Promise<number[]> {
  await mkdir(dir);
  const file = join(dir, "dev.yaml");
  const versions = [environmentYaml(FLAGS, "off"), environmentYaml(FLAGS, "on")];
  await writeFile(file, versions[0]!);
  const clients = streamClients();
  const server = await startNode(bin, [file, "--port", "0", "--quiet", "--state-dir", join(dir, "state")]);
  const latencies: number[] = [];
  try {
    const port = Number(new URL(server.url).port);
    const opened = await clients.ask<{ failed: number }>({
      type: "open",
      port,
      path: "/api/v1/flags/events",
      key: KEY,
      count: 1,
      concurrency: 1,
    });
    if (opened.failed > 0) throw new Error("the event stream could not be opened");
    for (let edit = 1; edit <= EDITS; edit++) {
      await clients.ask({ type: "prepare", file, content: versions[edit % 2] });
      await pause(AFTER_MS);
      const [latency] = (await clients.ask<{ latencies: number[] }>({ type: "edit", timeoutMs: 30_000 })).latencies;
      if (latency! < 0) throw new Error(`no flag-updated within 30 s of edit ${edit}`);
      latencies.push(latency!);
    }
  } finally {
    await clients.close();
    await stop(server.child);
  }
  return latencies;
}

await withTempDir(async (dir) => {
  header(`one file of ${FLAGS} flags, ${RUNS} fresh servers per build, edits ${AFTER_MS} ms apart from the first answer`);
  const builds = [
    { label: "this build", bin: BIN },
    ...(values.against ? [{ label: `--against ${values.against}`, bin: values.against }] : []),
  ];
  const results = new Map(builds.map((build) => [build, [] as number[][]]));
  for (let i = 0; i < RUNS; i++) {
    for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
      const runDir = join(dir, `${results.get(build)!.length}-${builds.indexOf(build)}`);
      results.get(build)!.push(await run(build.bin, runDir));
    }
  }
  const rows = builds.map((build) => {
    const runs = results.get(build)!;
    const first = median(runs.map((r) => r[0]!));
    const fifth = median(runs.map((r) => r[EDITS - 1]!));
    return { build, first, fifth };
  });
  printTable(
    ["build", "first edit, p50 ms", "fifth edit, p50 ms", "first / fifth", "each run's edits, ms"],
    rows.map(({ build, first, fifth }) => [
      build.label,
      first.toFixed(1),
      fifth.toFixed(1),
      ratio(first, fifth),
      results
        .get(build)!
        .map((r) => r.map((ms) => ms.toFixed(0)).join("/"))
        .join(" "),
    ]),
  );
  printRatios(
    "bench:first-edit (first / fifth edit)",
    rows.map(({ build, first, fifth }) => [build.label, ratio(first, fifth)]),
  );
});
