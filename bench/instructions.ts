/**
 * Instructions per request, flagserve beside the bare node:http baseline (bench/baseline-server.mjs
 * answering with flagserve's very bytes), counted by valgrind's cachegrind: a count, not a time,
 * so it does not move with the machine's speed the way req/s does (bench:http). Needs valgrind
 * (`apt-get install valgrind`); takes about ten minutes.
 *
 *   npm run bench:instructions
 *   npm run bench:instructions -- --rows 304 --warm 5000 --counted 5000   # a quicker, rougher look
 *
 * Each server runs under cachegrind twice, once for `--warm` requests and once for `--warm` +
 * `--counted`, one connection at a time (autocannon), and a request costs the difference of the
 * two totals divided by `--counted`: start-up, warm-up and exit cancel out. Warm-up must be long
 * enough for the JIT to settle (compilation counts as instructions too); the default is.
 * Counts say nothing of cache misses, so a ratio here runs above bench:http's.
 */
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import {
  benchFile,
  benchYaml,
  BIN,
  header,
  KEY,
  ONE_BODY,
  printRatios,
  printTable,
  replyFor,
  startFlagserve,
  stop,
  withTempDir,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    warm: { type: "string", default: "20000" },
    counted: { type: "string", default: "10000" },
    rows: { type: "string", default: "single,304" },
  },
});
const warm = Number(values.warm);
const counted = Number(values.counted);

const ALL = "/ofrep/v1/evaluate/flags";

interface Row {
  label: string;
  name: string;
  path: string;
  headers: Record<string, string>;
  status: number;
}

/** Total instructions of `node script ...args` under cachegrind, after `requests` requests of `row`. */
async function instructions(script: string, args: string[], row: Row, requests: number, outFile: string): Promise<number> {
  const child = spawn(
    "valgrind",
    [
      "--tool=cachegrind",
      "--cache-sim=no",
      "--smc-check=all-non-file",
      `--cachegrind-out-file=${outFile}`,
      process.execPath,
      script,
      ...args,
    ],
    {
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /^ready (\S+)$/m.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("error", (error) => reject(new Error(`valgrind could not start (apt-get install valgrind): ${error.message}`)));
    child.once("exit", (code) => reject(new Error(`${script} under valgrind exited with ${code} before it was ready`)));
  });
  const result = await autocannon({
    url: `${url}${row.path}`,
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY, ...row.headers },
    body: ONE_BODY,
    connections: 1,
    amount: requests,
  });
  const codes = Object.keys(result.statusCodeStats ?? {}).map(Number);
  if (codes.some((code) => code !== row.status))
    throw new Error(`${row.name}: expected only ${row.status}, got ${JSON.stringify(result.statusCodeStats)}`);
  await new Promise<void>((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
  const summary = /^summary: (\d+)/m.exec(await readFile(outFile, "utf8"));
  if (!summary) throw new Error(`no summary line in ${outFile}`);
  return Number(summary[1]);
}

/** Instructions per request: the difference between a run of `warm` and one of `warm + counted` requests. */
async function perRequest(script: string, args: string[], row: Row, dir: string, name: string): Promise<number> {
  const short = await instructions(script, args, row, warm, join(dir, `${name}-short.cg`));
  const long = await instructions(script, args, row, warm + counted, join(dir, `${name}-long.cg`));
  return (long - short) / counted;
}

await withTempDir(async (dir) => {
  const file = join(dir, "bench.yaml");
  await writeFile(file, benchYaml(100));
  // The ETag and the exact replies come from flagserve run normally; the ETag is the same in every run.
  const started = await startFlagserve(file, join(dir, "state"));
  let rows: Row[];
  const replies = new Map<string, string>();
  try {
    const etag = (await fetch(`${started.url}${ALL}`, { method: "POST", headers: { "x-api-key": KEY }, body: ONE_BODY })).headers.get(
      "etag",
    )!;
    rows = [
      { label: "single", name: "single flag, targeted", path: `${ALL}/flag-001`, headers: {}, status: 200 },
      { label: "all", name: "evaluate-all, 100 flags, same context", path: ALL, headers: {}, status: 200 },
      { label: "304", name: "evaluate-all, 304 revalidation", path: ALL, headers: { "if-none-match": etag }, status: 304 },
    ];
    const chosen = values.rows.split(",").map((label) => label.trim());
    const unknown = chosen.filter((label) => !rows.some((row) => row.label === label));
    if (unknown.length > 0) throw new Error(`unknown --rows ${unknown.join(", ")}: choose from ${rows.map((row) => row.label).join(", ")}`);
    rows = rows.filter((row) => chosen.includes(row.label));
    for (const row of rows) replies.set(row.label, await replyFor(started.url, row.path, row.headers, ONE_BODY, row.status));
  } finally {
    await stop(started.child);
  }

  header(`cachegrind, 1 connection, ${warm} requests to warm up, ${counted} counted`);
  const table: (string | number)[][] = [];
  const ratios: [string, string][] = [];
  for (const row of rows) {
    const ours = await perRequest(
      BIN,
      [file, "--port", "0", "--quiet", "--state-dir", join(dir, `state-${row.label}`)],
      row,
      dir,
      `flagserve-${row.label}`,
    );
    const theirs = await perRequest(benchFile("baseline-server.mjs"), [replies.get(row.label)!], row, dir, `baseline-${row.label}`);
    table.push([row.name, Math.round(ours), Math.round(theirs), (theirs / ours).toFixed(2)]);
    ratios.push([row.label, (theirs / ours).toFixed(2)]);
  }
  printTable(["scenario", "flagserve instructions/req", "baseline instructions/req", "ratio"], table);
  printRatios("bench:instructions (baseline / flagserve instructions per request)", ratios);
});
