/**
 * Edit-to-event latency: the time from the start of a file write to the `flag-updated` event on an
 * SSE client, over N edits, beside the raw notification latency of node:fs.watch on the same
 * file in the same run (the floor any watcher starts from).
 *
 *   node --import tsx bench/reload-latency.ts            # 50 edits
 *   node --import tsx bench/reload-latency.ts --edits 200
 */
import { spawn } from "node:child_process";
import { watch } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { edits: { type: "string", default: "50" } } });
const edits = Number(values.edits);
const KEY = "latency-key-0123456789";
const file = (i: number) => `apiKey: ${KEY}\nflags:\n  f:\n    variants: { v: ${i} }\n    defaultVariant: v\n`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)! };
};

async function flagserveLatencies(dir: string): Promise<number[]> {
  const target = join(dir, "flags", "dev.yaml");
  const bin = fileURLToPath(new URL("../bin/flagserve.js", import.meta.url));
  const child = spawn(process.execPath, [bin, join(dir, "flags"), "--port", "0", "--quiet", "--state-dir", join(dir, "state")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      const m = /^ready (\S+)\n/m.exec(out);
      if (m) resolve(m[1]!);
    });
  });
  const res = await fetch(`${url}/api/v1/flags/events`, { headers: { "x-api-key": KEY, accept: "text/event-stream" } });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const nextEvent = async () => {
    for (;;) {
      const at = buffer.indexOf("event: flag-updated");
      if (at !== -1) {
        buffer = buffer.slice(at + 1);
        return performance.now();
      }
      const { value } = await reader.read();
      buffer += value;
    }
  };
  const samples: number[] = [];
  for (let i = 1; i <= edits; i++) {
    const received = nextEvent();
    const start = performance.now();
    await writeFile(target, file(i));
    samples.push((await received) - start);
    await pause(20);
  }
  await reader.cancel();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  return samples;
}

async function fsWatchLatencies(dir: string): Promise<number[]> {
  const target = join(dir, "raw.yaml");
  await writeFile(target, file(0));
  let notify: (() => void) | undefined;
  const watcher = watch(dir, () => notify?.());
  const samples: number[] = [];
  for (let i = 1; i <= edits; i++) {
    const received = new Promise<number>((resolve) => (notify = () => resolve(performance.now())));
    const start = performance.now();
    await writeFile(target, file(i));
    samples.push((await received) - start);
    notify = undefined;
    await pause(20);
  }
  watcher.close();
  return samples;
}

const dir = await mkdtemp(join(tmpdir(), "flagserve-latency-"));
await mkdir(join(dir, "flags"));
await writeFile(join(dir, "flags", "dev.yaml"), file(0));
const ours = summary(await flagserveLatencies(dir));
const raw = summary(await fsWatchLatencies(dir));
await rm(dir, { recursive: true, force: true });

const ms = (n: number) => n.toFixed(1);
console.log(`node ${process.version}, ${edits} edits, write -> event received by an SSE client\n`);
console.log("| | median ms | p99 ms | max ms |");
console.log("|---|---:|---:|---:|");
console.log(`| flagserve: edit -> \`flag-updated\` on SSE | ${ms(ours.median)} | ${ms(ours.p99)} | ${ms(ours.max)} |`);
console.log(`| baseline: edit -> node:fs.watch callback | ${ms(raw.median)} | ${ms(raw.p99)} | ${ms(raw.max)} |`);
console.log(`\nratio (median): ${(ours.median / raw.median).toFixed(0)}x; flagserve adds ${ms(ours.median - raw.median)} ms (most of it waiting for the write to settle)`);
