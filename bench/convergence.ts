/**
 * Convergence bound: how long after the last write the input check alone (no watcher
 * notification at all) has loaded it. Real files, the real loader and reloader, at the server's
 * check interval; each edit lands at a random point of the interval. With the watcher, edits are
 * seen sooner (`bench/reload-latency.ts`); this is the bound when a notification is lost.
 *
 *   node --import tsx bench/convergence.ts              # 100 edits
 *   node --import tsx bench/convergence.ts --edits 300
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createReloader } from "../src/changes/reloader.js";
import { loadConfig } from "../src/config/index.js";
import { CHECK_INTERVAL_MS } from "../src/server/server.js";

const { values } = parseArgs({ options: { edits: { type: "string", default: "100" } } });
const edits = Number(values.edits);
const file = (i: number) => `flags:\n  f:\n    variants: { v: ${i} }\n    defaultVariant: v\n`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = await mkdtemp(join(tmpdir(), "flagserve-converge-"));
await mkdir(join(dir, "flags"));
const target = join(dir, "flags", "dev.yaml");
await writeFile(target, file(0));

let loaded = -1;
let onLoaded: (() => void) | undefined;
const reloader = createReloader({
  checkMs: CHECK_INTERVAL_MS,
  onError: (error) => console.error(error),
  async run(inputs) {
    const load = await loadConfig(join(dir, "flags"), { inputs });
    loaded = (load.environments.get("dev")?.config.flags.f?.variants.v as number | undefined) ?? -1;
    onLoaded?.();
  },
});
await reloader.reload();
const keepAlive = setInterval(() => {}, 1000); // the check timer is unref'd, like the server's

const samples: number[] = [];
for (let i = 1; i <= edits; i++) {
  await pause(Math.random() * CHECK_INTERVAL_MS);
  const start = performance.now();
  const seen = new Promise<void>((resolve) => (onLoaded = () => loaded === i && resolve()));
  await writeFile(target, file(i));
  await seen;
  samples.push(performance.now() - start);
}
reloader.close();
clearInterval(keepAlive);
await rm(dir, { recursive: true, force: true });

const sorted = samples.sort((a, b) => a - b);
const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(1);
console.log(`node ${process.version}, ${edits} edits, no watcher: last write -> loaded, check every ${CHECK_INTERVAL_MS} ms\n`);
console.log("| median ms | p99 ms | max ms |");
console.log("|---:|---:|---:|");
console.log(`| ${at(50)} | ${at(99)} | ${sorted.at(-1)!.toFixed(1)} |`);
