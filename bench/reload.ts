/**
 * Reloads: what one edit costs, by the size of what is served, side by side in one run, and the
 * scale budget's goals (docs/architecture.md) checked against the figures. Five flagserve servers
 * run at once, each on a directory of its own (the shared fixture, bench/lib.ts: every flag with
 * a segment `$ref` or a rule where it writes one):
 *
 *   100           one file of 100 flags (the baseline of the ratios)
 *   1 000         one file of 1 000 flags (the budget's largest environment)
 *   1 000 broken  the same, its last flag's defaultVariant naming no variant in every version (each
 *                 reload has a problem to locate; flag 0's edit still applies)
 *   100 x 100     100 environment files of 100 flags, one of them edited (the budget's most files)
 *   10 000        one file of 10 000 flags (about 2 MB: beyond the budget)
 *
 * Each edit changes one flag's `defaultVariant` (written in one go, as an editor saves), --pause
 * ms apart, the servers taking turns (the one that goes first alternating). A latency is from just
 * before the write to the receipt of `flag-updated` on a stream of the edited environment (the
 * client is bench/stream-clients.ts, in a process of its own, which also writes the file).
 * Meanwhile this process evaluates one flag every 2 ms on a keep-alive connection to the server
 * being edited, until --pause ms after the event: the longest of those evaluations is how long a
 * request waited behind a reload. Beside it, the longest evaluation in as long a window just
 * before each edit, on the same server: what the machine alone costs. The server's CPU time
 * (all its threads, from /proc) in the edit's window less that of the window before it is what
 * the edit cost it.
 *
 * Then start-up beyond the budget, at --startup-flags flags (one environment: a directory of
 * files of 10 000 flags, as one file may hold at most 10 MiB): spawn -> first answer, RSS then,
 * and the longest evaluation in the next two seconds.
 *
 *   npm run bench:reload
 *   npm run bench:reload -- --edits 5 --startup-flags 0              # a quick check
 *   npm run bench:reload -- --against ../other/bin/flagserve.js     # each configuration on another build too
 *   npm run bench:reload -- --only 1000 --startup-flags 0           # some configurations beside 100 flags (no goals table)
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import {
  BIN,
  benchEnvironment,
  cpuMicrosOf,
  environmentYaml,
  flagKey,
  header,
  KEY,
  median,
  memoryOf,
  pause,
  printRatios,
  printTable,
  ratio,
  startNode,
  streamClients,
  stop,
  withTempDir,
  type Started,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    edits: { type: "string", default: "10" },
    pause: { type: "string", default: "300" },
    "startup-flags": { type: "string", default: "100000" },
    against: { type: "string" },
    only: { type: "string" },
  },
});
const EDITS = Number(values.edits);
const PAUSE_MS = Number(values.pause);
const STARTUP_FLAGS = Number(values["startup-flags"]);
const EVENTS_PATH = "/api/v1/flags/events";

/**
 * Evaluates one flag every 2 ms on one keep-alive connection while `active` (only the server
 * being measured is asked: the others' answers would only be load on the machine); `max` is the
 * longest answer since the last `reset`.
 */
function prober(url: string, key: string, flag: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ context: { targetingKey: "user-42", email: "ada@example.com" } });
  let running = true;
  let active = false;
  let wake: (() => void) | undefined;
  let max = 0;
  let count = 0;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const req = request(
        {
          agent,
          hostname,
          port,
          method: "POST",
          path: `/ofrep/v1/evaluate/flags/${flag}`,
          headers: { "x-api-key": key, "content-type": "application/json" },
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            max = Math.max(max, performance.now() - t0);
            count++;
            resolve();
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  const loop = (async () => {
    while (running) {
      if (!active) await new Promise<void>((resolve) => (wake = resolve));
      else {
        await once();
        await pause(2);
      }
    }
  })();
  return {
    reset: () => void ((max = 0), (count = 0)),
    set active(on: boolean) {
      active = on;
      if (on) wake?.();
    },
    get max() {
      return max;
    },
    get count() {
      return count;
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      agent.destroy();
    },
  };
}

// ---- the configurations -----------------------------------------------------------------------

/** Label, short name, files, flags per file, and whether a flag is broken in every version. */
type Shape = [label: string, short: string, files: number, flags: number, broken?: boolean];

interface Config {
  label: string;
  short: string;
  /** Another build's bin/flagserve.js serving it (--against), else this build. */
  bin?: string;
  /** The edited file, and its two versions (flag 0's defaultVariant off / on). */
  file: string;
  versions: [string, string];
  key: string;
  flag: string;
  latencies: number[];
  /** The server's CPU time per edit, ms: its edit's window less the windows before it. */
  cpu: number[];
  /** The longest evaluation in the edits' windows, and in as many windows as long without an edit. */
  maxEval: number;
  maxEvalIdle: number;
  /** A flag of the file is broken in every version. */
  broken?: boolean;
}

/** The last flag's defaultVariant names no variant: every load of the text has a problem to locate. */
const withBrokenFlag = (text: string): string => text.replace(/(.*defaultVariant: )\S+/s, "$1not-a-variant");

async function setUp(shape: Shape, dir: string, bin?: string): Promise<Config> {
  const [label, name, files, flags, broken] = shape;
  const short = bin ? `${name}-against` : name;
  const root = join(dir, short);
  await mkdir(root);
  const text = (defaultVariant: string, key: string) => {
    const written = environmentYaml(flags, defaultVariant, key);
    return broken ? withBrokenFlag(written) : written;
  };
  const keyOf = (i: number) => (files === 1 ? KEY : `${KEY}-${String(i).padStart(3, "0")}`);
  for (let i = 0; i < files; i++) await writeFile(join(root, `env-${String(i).padStart(3, "0")}.yaml`), text("off", keyOf(i)));
  const edited = Math.floor(files / 2);
  const key = keyOf(edited);
  return {
    label: bin ? `${label}, the --against build` : label,
    short,
    bin,
    file: join(root, `env-${String(edited).padStart(3, "0")}.yaml`),
    versions: [text("off", key), text("on", key)],
    key,
    flag: flagKey(1, flags),
    latencies: [],
    cpu: [],
    maxEval: 0,
    maxEvalIdle: 0,
    broken,
  };
}

async function measureEdits(configs: Config[], dir: string): Promise<void> {
  const running: { config: Config; server: Started; clients: ReturnType<typeof streamClients>; probe: ReturnType<typeof prober> }[] = [];
  try {
    for (const config of configs) {
      const server = await startNode(config.bin ?? BIN, [
        join(dir, config.short),
        "--port",
        "0",
        "--quiet",
        "--state-dir",
        join(dir, `state-${config.short}`),
        // A file with a problem is served only when asked to (its broken flag answers PARSE_ERROR).
        ...(config.broken ? ["--allow-invalid"] : []),
      ]);
      const clients = streamClients();
      running.push({ config, server, clients, probe: prober(server.url, config.key, config.flag) });
      const opened = await clients.ask<{ failed: number }>({
        type: "open",
        port: Number(new URL(server.url).port),
        path: EVENTS_PATH,
        key: config.key,
        count: 1,
        concurrency: 1,
      });
      if (opened.failed > 0) throw new Error(`${config.label}: the event stream could not be opened`);
    }
    await editInTurns(running);
  } finally {
    // Also when a server failed to start or an edit went unannounced: nothing is left running.
    for (const { server, clients, probe } of running) {
      await probe.stop();
      await clients.close();
      await stop(server.child);
    }
  }
}

async function editInTurns(
  running: { config: Config; server: Started; clients: ReturnType<typeof streamClients>; probe: ReturnType<typeof prober> }[],
): Promise<void> {
  // Every file's last change is well in the past (as in a directory edited now and then), and each
  // probe has warmed up (its first requests are slow on the client's side).
  for (const { probe } of running) probe.active = true;
  await pause(2500);
  for (const { probe } of running) probe.active = false;
  for (let round = 0; round < EDITS; round++) {
    for (const { config, server, clients, probe } of round % 2 === 0 ? running : [...running].reverse()) {
      const pid = server.child.pid!;
      await clients.ask({ type: "prepare", file: config.file, content: config.versions[(round + 1) % 2] });
      probe.reset();
      probe.active = true;
      const idleFrom = cpuMicrosOf(pid);
      await pause(PAUSE_MS);
      const idleCpu = cpuMicrosOf(pid) - idleFrom;
      config.maxEvalIdle = Math.max(config.maxEvalIdle, probe.max);
      probe.reset();
      const editFrom = cpuMicrosOf(pid);
      const editAt = performance.now();
      const { latencies } = await clients.ask<{ latencies: number[] }>({ type: "edit", timeoutMs: 30_000 });
      if (latencies[0]! < 0) throw new Error(`${config.label}: no flag-updated within 30 s of edit ${round + 1}`);
      // Two idle windows long from the write, so that the CPU time of the edit's window compares.
      await pause(Math.max(0, 2 * PAUSE_MS - (performance.now() - editAt)));
      probe.active = false;
      config.cpu.push((cpuMicrosOf(pid) - editFrom - 2 * idleCpu) / 1000);
      config.maxEval = Math.max(config.maxEval, probe.max);
      config.latencies.push(latencies[0]!);
    }
  }
}

// ---- start-up ---------------------------------------------------------------------------------

/** One environment of `count` flags as a directory of files of at most 10 000 flags each. */
async function writeBigEnvironment(root: string, count: number): Promise<void> {
  const env = join(root, "big");
  await mkdir(env, { recursive: true });
  const { $evaluators, flags } = benchEnvironment(count);
  const keys = Object.keys(flags);
  for (let start = 0, part = 0; start < keys.length; start += 10_000, part++) {
    const doc: Record<string, unknown> = part === 0 ? { apiKey: KEY, $evaluators } : {};
    doc.flags = Object.fromEntries(keys.slice(start, start + 10_000).map((key) => [key, flags[key]]));
    await writeFile(join(env, `part-${String(part).padStart(2, "0")}.yaml`), stringify(doc));
  }
}

async function measureStartup(dir: string) {
  const root = join(dir, "startup");
  await writeBigEnvironment(root, STARTUP_FLAGS);
  const t0 = performance.now();
  const server = await startNode(BIN, [root, "--port", "0", "--quiet", "--state-dir", join(dir, "state-startup")]);
  const probe = prober(server.url, KEY, flagKey(1, STARTUP_FLAGS));
  try {
    probe.active = true;
    while (probe.count === 0) await pause(1);
    const ms = performance.now() - t0;
    const memory = memoryOf(server.child.pid!);
    probe.reset();
    await pause(2000);
    return { ms, ...memory, maxEval: probe.max, evals: probe.count };
  } finally {
    await probe.stop();
    await stop(server.child);
  }
}

// ---- the goals --------------------------------------------------------------------------------

/** The folders and files docs/architecture.md counts as the reload path (generated validators left out). */
const RELOAD_PATH = ["config", "sources", "changes", "model", "store/snapshot.ts", "store/store.ts", "store/content-hash.ts"];

/** Lines of the TypeScript files under `path` (a folder of src/, or a file), generated code left out. */
function linesOf(path: string): number {
  const full = fileURLToPath(new URL(`../src/${path}`, import.meta.url));
  if (!statSync(full).isDirectory()) return readFileSync(full, "utf8").split("\n").length - 1;
  return readdirSync(full, { withFileTypes: true })
    .filter((entry) => entry.name !== "generated" && (entry.isDirectory() || entry.name.endsWith(".ts")))
    .reduce((sum, entry) => sum + linesOf(`${path}/${entry.name}`), 0);
}

function goals(byShort: Map<string, Config>): (string | number)[][] {
  const p50 = (short: string) => median(byShort.get(short)!.latencies);
  const [budget, broken, big] = [byShort.get("1000")!, byShort.get("1000-broken")!, byShort.get("10000")!];
  const lines = RELOAD_PATH.reduce((sum, path) => sum + linesOf(path), 0);
  const row = (measure: string, goal: string, measured: string, met: boolean) => [measure, goal, measured, met ? "met" : "NOT MET"];
  return [
    row(
      "edit -> flag-updated p50, one file of 1 000 flags",
      "within 15 ms of the 100-flag file",
      `${(p50("1000") - p50("100")).toFixed(1)} ms more (${p50("1000").toFixed(1)} / ${p50("100").toFixed(1)})`,
      p50("1000") - p50("100") <= 15,
    ),
    row("longest evaluation during 1 000-flag reloads", "≤ 20 ms", `${budget.maxEval.toFixed(1)} ms`, budget.maxEval <= 20),
    row("the same, a flag of the file broken", "≤ 20 ms", `${broken.maxEval.toFixed(1)} ms`, broken.maxEval <= 20),
    row(
      "100 files of 100 flags, one edited",
      "within 1.5x of the 100-flag file",
      `${ratio(p50("100x100"), p50("100"))}x`,
      p50("100x100") <= 1.5 * p50("100"),
    ),
    row("one file of 10 000 flags: edit -> event p50", "≤ 600 ms", `${p50("10000").toFixed(1)} ms`, p50("10000") <= 600),
    row("one file of 10 000 flags: longest evaluation", "≤ 150 ms", `${big.maxEval.toFixed(1)} ms`, big.maxEval <= 150),
    row("hand-written lines on the reload path", "≤ 3 600", String(lines), lines <= 3600),
  ];
}

// ---- report -----------------------------------------------------------------------------------

await withTempDir(async (dir) => {
  header(`${EDITS} edits per configuration, ${PAUSE_MS} ms apart`);
  const shapes: Shape[] = [
    ["one file of 100 flags", "100", 1, 100],
    ["one file of 1 000 flags", "1000", 1, 1_000],
    ["one file of 1 000 flags, its last flag broken throughout", "1000-broken", 1, 1_000, true],
    ["100 files of 100 flags, one edited", "100x100", 100, 100],
    ["one file of 10 000 flags (beyond the budget)", "10000", 1, 10_000],
  ];
  const only = values.only?.split(",");
  const unknown = only?.filter((short) => !shapes.some((shape) => shape[1] === short));
  if (unknown?.length) throw new Error(`--only: no configuration ${unknown.join(", ")} (${shapes.map((shape) => shape[1]).join(", ")})`);
  // The 100-flag file always runs: it is the baseline of the ratios.
  const chosen = only ? shapes.filter(([, short]) => short === "100" || only.includes(short)) : shapes;
  const configs: Config[] = [];
  for (const shape of chosen) configs.push(await setUp(shape, dir));
  if (values.against) {
    header(`beside: ${values.against}`);
    for (const shape of chosen) configs.push(await setUp(shape, dir, values.against));
  }
  await measureEdits(configs, dir);
  const base = median(configs[0]!.latencies);
  printTable(
    [
      "configuration",
      "edit -> flag-updated p50, ms",
      "max, ms",
      "ratio to 100 flags",
      "longest evaluation during the reloads, ms",
      "without a reload, ms",
      "server CPU per edit, median ms",
    ],
    configs.map((c) => [
      c.label,
      median(c.latencies).toFixed(1),
      Math.max(...c.latencies).toFixed(1),
      ratio(median(c.latencies), base),
      c.maxEval.toFixed(1),
      c.maxEvalIdle.toFixed(1),
      median(c.cpu).toFixed(1),
    ]),
  );
  // The goals compare every configuration: with some left out, only the table above.
  if (!only) {
    console.log();
    printTable(["goal (docs/architecture.md)", "target", "measured", ""], goals(new Map(configs.map((c) => [c.short, c]))));
  }
  printRatios(
    "bench:reload (edit p50 / 100 flags)",
    configs.slice(1).map((c) => [c.short, ratio(median(c.latencies), base)]),
  );
  if (STARTUP_FLAGS === 0) return;
  const start = await measureStartup(dir);
  console.log();
  printTable(
    ["start-up beyond the budget", "value"],
    [
      [`spawn -> first answer, ${STARTUP_FLAGS} flags, ms`, start.ms.toFixed(0)],
      ["RSS at the first answer, MB (peak until then)", `${(start.rss / 1e6).toFixed(0)} (${(start.peak / 1e6).toFixed(0)})`],
      [`longest evaluation in the 2 s after (${start.evals} evaluations), ms`, start.maxEval.toFixed(1)],
    ],
  );
});
