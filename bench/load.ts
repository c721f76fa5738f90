/**
 * Load time against the number of flags, and how long a big reload holds up requests.
 *
 * 1. `flagserve validate FILE` (the real CLI) on files of 10 000, 20 000 and 40 000 flags (a third
 *    static, a third with a segment `$ref`, a third `fractional`), beside the floor of reading the
 *    same file (a bare process that parses it with flagserve's YAML reader alone and checks
 *    nothing; see readFloorArgs in lib.ts). The time per flag should stay flat as the file grows.
 * 2. A running server (the real CLI, watching) whose one file grows from 10 flags to 40 000 while a
 *    client sends requests one after another: the slowest request during the reload is how long
 *    the event loop was held.
 *
 *   node --import tsx bench/load.ts                 # 10k, 20k, 40k
 *   node --import tsx bench/load.ts --sizes 5000,10000 --reload 20000
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readFloorArgs } from "./lib.js";

const { values } = parseArgs({
  options: { sizes: { type: "string", default: "10000,20000,40000" }, reload: { type: "string", default: "40000" } },
});
const sizes = values.sizes.split(",").map(Number);
const reloadSize = Number(values.reload);
const KEY = "bench-load-key-0123456789";
const BIN = fileURLToPath(new URL("../bin/flagserve.js", import.meta.url));

function flagsFile(n: number): string {
  const out = [`apiKey: ${KEY}`, "segments:", "  beta: { ends_with: [{ var: email }, '@example.com'] }", "flags:"];
  for (let i = 0; i < n; i++) {
    const targeting =
      i % 3 === 1
        ? "\n    targeting: { if: [{ $ref: beta }, 'on', null] }"
        : i % 3 === 2
          ? "\n    targeting: { fractional: [['on', 50], ['off', 50]] }"
          : "";
    out.push(
      `  flag-${i}:\n    variants: { 'on': true, 'off': false }\n    defaultVariant: 'off'${targeting}\n    metadata: { owner: team-${i % 10} }`,
    );
  }
  return `${out.join("\n")}\n`;
}

/** Wall time of a child process, in seconds; fails on a non-zero exit. */
function timed(args: string[]): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
    child.on("exit", (code) =>
      code === 0 ? resolve((performance.now() - start) / 1000) : reject(new Error(`${args.join(" ")} exited ${code}`)),
    );
  });
}

async function validateTimes(dir: string) {
  console.log(
    `node ${process.version}, validate (real CLI) vs reading the same file (flagserve's YAML reader alone, no checks), each in a fresh process\n`,
  );
  console.log("| flags | file MB | validate s | µs per flag | read s | ratio |");
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const n of sizes) {
    const file = join(dir, `f${n}.yaml`);
    const text = flagsFile(n);
    await writeFile(file, text);
    const validate = await timed([BIN, "validate", file]);
    const baseline = await timed(readFloorArgs(file));
    const mb = (Buffer.byteLength(text) / 1e6).toFixed(1);
    console.log(
      `| ${n} | ${mb} | ${validate.toFixed(2)} | ${((validate / n) * 1e6).toFixed(0)} | ${baseline.toFixed(2)} | ${(validate / baseline).toFixed(1)} |`,
    );
  }
}

async function reloadStall(dir: string) {
  const flags = join(dir, "served");
  const file = join(flags, "dev.yaml");
  await rm(flags, { recursive: true, force: true });
  await import("node:fs/promises").then((fs) => fs.mkdir(flags, { recursive: true }));
  await writeFile(file, flagsFile(10));
  const child = spawn(process.execPath, [BIN, flags, "--port", "0", "--quiet", "--state-dir", join(dir, "state")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve) => {
      let out = "";
      child.stdout!.setEncoding("utf8").on("data", (c: string) => {
        out += c;
        const m = /^ready (\S+)\n/m.exec(out);
        if (m) resolve(m[1]!);
      });
    });
    const last = `flag-${reloadSize - 1}`;
    const ask = async (flag: string) => {
      const start = performance.now();
      const res = await fetch(`${url}/ofrep/v1/evaluate/flags/${flag}`, {
        method: "POST",
        headers: { "x-api-key": KEY },
        body: '{"context":{"targetingKey":"u"}}',
      });
      await res.arrayBuffer();
      return { ms: performance.now() - start, status: res.status };
    };
    for (let i = 0; i < 50; i++) await ask("flag-0"); // warm up
    const latencies: number[] = [];
    const began = performance.now();
    await writeFile(file, flagsFile(reloadSize));
    // Requests one after another until the new flags are served (bounded: 5 minutes).
    for (;;) {
      const { ms, status } = await ask(last);
      latencies.push(ms);
      if (status === 200 || performance.now() - began > 300_000) break;
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
    console.log(`\nreload 10 -> ${reloadSize} flags under a sequential request loop (real CLI, watching)\n`);
    console.log("| edit to served s | requests during reload | median ms | p99 ms | longest ms |");
    console.log("|---:|---:|---:|---:|---:|");
    console.log(
      `| ${((performance.now() - began) / 1000).toFixed(1)} | ${latencies.length} | ${pct(50).toFixed(1)} | ${pct(99).toFixed(0)} | ${sorted.at(-1)!.toFixed(0)} |`,
    );
  } finally {
    child.kill("SIGTERM");
  }
}

const dir = await mkdtemp(join(tmpdir(), "flagserve-bench-load-"));
try {
  await validateTimes(dir);
  await reloadStall(dir);
} finally {
  await rm(dir, { recursive: true, force: true });
}
