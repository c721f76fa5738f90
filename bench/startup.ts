/**
 * Start-up with a large file: the shared fixture scaled to --flags flags (block-style YAML, about
 * 2 MB for 10 000), generated in a temporary directory.
 *
 *   start    from spawning `flagserve FILE` to the first answer (one flag evaluated over HTTP),
 *            and the server's RSS then (and its peak) and 3 s later (start-up work done, the
 *            parse worker started; and with --no-watch, which starts none), beside a bare
 *            node:http server (bench/baseline-server.mjs) spawned and asked the same way
 *   validate wall time of `flagserve validate FILE`, beside the floor of reading the file: a bare
 *            node process that reads it and parses it with flagserve's YAML reader alone (no
 *            checks; see readFloorArgs)
 *
 * Medians of --runs runs.
 *
 *   npm run bench:startup
 *   npm run bench:startup -- --flags 2000 --runs 1    # a quick check
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseArgs } from "node:util";
import {
  benchFile,
  benchYaml,
  BIN,
  flagKey,
  header,
  KEY,
  median,
  memoryOf,
  pause,
  printRatios,
  printTable,
  ratio,
  readFloorArgs,
  startFlagserve,
  startNode,
  stop,
  withTempDir,
  type Started,
} from "./lib.js";

const { values } = parseArgs({ options: { flags: { type: "string", default: "10000" }, runs: { type: "string", default: "3" } } });
const count = Number(values.flags);
const runs = Number(values.runs);
const run = promisify(execFile);
const REPO = new URL("..", import.meta.url);

const firstFlag = `/ofrep/v1/evaluate/flags/${flagKey(1, count)}`;
const body = JSON.stringify({ context: { targetingKey: "user-42", email: "ada@example.com" } });
const ask = (url: string) => fetch(`${url}${firstFlag}`, { method: "POST", headers: { "x-api-key": KEY }, body });

interface Start {
  ms: number;
  rss: number;
  peak: number;
  /** RSS 3 s after the first answer. */
  settledRss: number;
}

/** After the first answer, the server's start-up work goes on in the background (ETags, the parse worker). */
const SETTLE_MS = 3_000;

/** Spawn -> first answer, then the process's memory, and its RSS SETTLE_MS later. */
async function startOnce(start: () => Promise<Started>): Promise<Start> {
  const t0 = performance.now();
  const server = await start();
  try {
    const res = await ask(server.url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`first answer: ${res.status}`);
    const ms = performance.now() - t0;
    const memory = memoryOf(server.child.pid!);
    await pause(SETTLE_MS);
    return { ms, ...memory, settledRss: memoryOf(server.child.pid!).rss };
  } finally {
    await stop(server.child);
  }
}

async function timed(command: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  await run(command, args, { cwd: REPO, maxBuffer: 64 * 1024 * 1024 });
  return performance.now() - t0;
}

await withTempDir(async (dir) => {
  const file = join(dir, "bench.yaml");
  const yaml = benchYaml(count);
  await writeFile(file, yaml);
  header(`${count} flags (${(yaml.length / 1e6).toFixed(1)} MB of YAML), median of ${runs} run(s)`);

  // The baseline answers with the very bytes flagserve gives for the first flag.
  const probe = await startFlagserve(file, join(dir, "state"), { extra: ["--no-watch"] });
  const answer = await ask(probe.url);
  const spec = JSON.stringify({ status: 200, headers: { "content-type": answer.headers.get("content-type") }, body: await answer.text() });
  await stop(probe.child);

  const ours: Start[] = [];
  const unwatched: Start[] = [];
  const bare: Start[] = [];
  const validate: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < runs; i++) {
    ours.push(await startOnce(() => startFlagserve(file, join(dir, "state"))));
    unwatched.push(await startOnce(() => startFlagserve(file, join(dir, "state"), { extra: ["--no-watch"] })));
    bare.push(await startOnce(() => startNode(benchFile("baseline-server.mjs"), [spec])));
    validate.push(await timed(process.execPath, [BIN, "validate", file]));
    floor.push(await timed(process.execPath, readFloorArgs(file)));
  }

  const m = (list: Start[], field: keyof Start) => median(list.map((s) => s[field]));
  const mb = (bytes: number) => (bytes / 1e6).toFixed(0);
  const rows: [string, string, number, number, (x: number) => string][] = [
    [`start to first answer, ${count} flags, ms`, "start", m(ours, "ms"), m(bare, "ms"), (x) => x.toFixed(0)],
    ["RSS at the first answer, MB", "RSS", m(ours, "rss"), m(bare, "rss"), mb],
    ["peak RSS until then, MB", "peak RSS", m(ours, "peak"), m(bare, "peak"), mb],
    [`RSS ${SETTLE_MS / 1000} s after the first answer, MB`, "RSS later", m(ours, "settledRss"), m(bare, "settledRss"), mb],
    [`the same with --no-watch (no parse worker), MB`, "RSS later, no watch", m(unwatched, "settledRss"), m(bare, "settledRss"), mb],
    [
      `validate, ${count} flags, ms (bare: reading the file, flagserve's YAML reader alone)`,
      "validate",
      median(validate),
      median(floor),
      (x) => x.toFixed(0),
    ],
  ];
  printTable(
    ["row", "flagserve", "bare", "ratio"],
    rows.map(([label, , a, b, f]) => [label, f(a), f(b), ratio(a, b)]),
  );
  printRatios(
    "bench:startup (flagserve / bare)",
    rows.map(([, short, a, b]) => [short, ratio(a, b)]),
  );
});
