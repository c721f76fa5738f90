/**
 * HTTP throughput and latency of flagserve beside a bare node:http server that returns the same
 * bytes, in the same run, on loopback. Each scenario is measured on both, one after the other,
 * with the same load; the ratio is flagserve / baseline.
 *
 *   npm run bench                     # 10 s per measurement, 50 connections
 *   npm run bench -- --duration 3     # quicker
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "50" } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const KEY = "bench-key-0123456789";

/** 100 flags: a mix of static, targeted and fractional ones, as a real file might have. */
function fixture(): string {
  const lines = [`apiKey: ${KEY}`, "segments:", "  beta:", '    ends_with: [{ var: email }, "@example.com"]', "flags:"];
  for (let i = 0; i < 100; i++) {
    const key = `flag-${String(i).padStart(3, "0")}`;
    lines.push(`  ${key}:`, '    variants: { "on": true, "off": false }', '    defaultVariant: "off"');
    if (i % 3 === 1) lines.push("    targeting:", '      if: [{ $ref: beta }, "on", null]');
    if (i % 3 === 2) lines.push("    targeting:", '      fractional: [["on", 25], ["off", 75]]');
  }
  return `${lines.join("\n")}\n`;
}

function start(command: string, args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [command, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /^ready (\S+)$/m.exec(out);
      if (match) resolve({ child, url: match[1]! });
    });
    child.once("exit", (code) => reject(new Error(`${command} exited with ${code}: ${out}`)));
  });
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });

interface Scenario {
  name: string;
  path: string;
  body: string;
  headers: Record<string, string>;
}

async function load(url: string, s: Scenario) {
  const result = await autocannon({
    url: `${url}${s.path}`,
    method: "POST",
    body: s.body,
    headers: { "content-type": "application/json", "x-api-key": KEY, ...s.headers },
    connections,
    duration,
  });
  if (result.non2xx > 0 && !s.headers["if-none-match"]) throw new Error(`${s.name}: ${result.non2xx} non-2xx responses`);
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts };
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "flagserve-bench-"));
  const file = join(dir, "bench.yaml");
  await writeFile(file, fixture());
  const bin = fileURLToPath(new URL("../bin/flagserve.js", import.meta.url));
  const baselineScript = fileURLToPath(new URL("./baseline-server.mjs", import.meta.url));
  const flagserve = await start(bin, [file, "--port", "0", "--quiet", "--state-dir", join(dir, "state")]);

  const context = JSON.stringify({ context: { targetingKey: "user-42", email: "ada@example.com" } });
  const bulk = await fetch(`${flagserve.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": KEY }, body: context });
  const etag = bulk.headers.get("etag")!;
  const scenarios: Scenario[] = [
    { name: "single flag (targeted)", path: "/ofrep/v1/evaluate/flags/flag-001", body: context, headers: {} },
    { name: "evaluate-all, 100 flags", path: "/ofrep/v1/evaluate/flags", body: context, headers: {} },
    { name: "evaluate-all, 304", path: "/ofrep/v1/evaluate/flags", body: context, headers: { "if-none-match": etag } },
  ];

  console.log(`node ${process.version}, ${connections} connections, ${duration} s per measurement, loopback\n`);
  console.log("| scenario | flagserve req/s | baseline req/s | ratio | flagserve p99 ms | baseline p99 ms |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const s of scenarios) {
    // Capture flagserve's exact answer, so the baseline sends the same bytes.
    const res = await fetch(`${flagserve.url}${s.path}`, { method: "POST", headers: { "x-api-key": KEY, ...s.headers }, body: s.body });
    const headers: Record<string, string> = {};
    for (const [k, v] of res.headers) if (!["date", "connection", "keep-alive", "transfer-encoding"].includes(k)) headers[k] = v;
    const spec = JSON.stringify({ status: res.status, headers, body: await res.text() });
    const baseline = await start(baselineScript, [spec]);
    const ours = await load(flagserve.url, s);
    const theirs = await load(baseline.url, s);
    await stop(baseline.child);
    console.log(
      `| ${s.name} | ${Math.round(ours.rps)} | ${Math.round(theirs.rps)} | ${(ours.rps / theirs.rps).toFixed(2)} | ${ours.p99} | ${theirs.p99} |`,
    );
    if (ours.errors || theirs.errors) console.log(`  (errors: flagserve ${ours.errors}, baseline ${theirs.errors})`);
  }
  await stop(flagserve.child);
  await rm(dir, { recursive: true, force: true });
}

await main();
