/**
 * Reloads: what one edit costs, by the size of what is served, side by side in one run. Three
 * flagserve servers run at once, each on a directory of its own, each flag with a segment `$ref`
 * where the shared fixture writes one (bench/lib.ts):
 *
 *   100        one environment, one file of 100 flags (the baseline of the ratios)
 *   10 000     one environment, one file of 10 000 flags (about 2 MB)
 *   100 x 100  100 environment files of 100 flags, one of them edited
 *
 * Each edit changes one flag's `defaultVariant` (written in one go, as an editor saves), --pause
 * ms apart, the servers taking turns (the one that goes first alternating). A latency is from
 * just before the write to the receipt of `flag-updated` on a stream of the edited environment
 * (the client is bench/stream-clients.ts, in a process of its own, which also writes the file).
 * Meanwhile this process evaluates one flag every 2 ms on a keep-alive connection to each server;
 * the longest of those evaluations says how long a request waited behind a reload.
 *
 * Then start-up at --startup-flags flags (one environment: a directory of files of 10 000 flags,
 * as one file may hold at most 10 MiB): spawn -> first answer, RSS then, and the longest
 * evaluation in the next two seconds (one every 2 ms).
 *
 *   npm run bench:reload
 *   npm run bench:reload -- --edits 5 --startup-flags 20000   # a quick check
 *   npm run bench:reload -- --startup-flags 0                  # the edits alone
 */
import { fork, type ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import {
  benchEnvironment,
  benchFile,
  flagKey,
  header,
  KEY,
  median,
  memoryOf,
  pause,
  printRatios,
  printTable,
  ratio,
  startFlagserve,
  stop,
  withTempDir,
  type Started,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    edits: { type: "string", default: "10" },
    pause: { type: "string", default: "300" },
    "startup-flags": { type: "string", default: "100000" },
  },
});
const EDITS = Number(values.edits);
const PAUSE_MS = Number(values.pause);
const STARTUP_FLAGS = Number(values["startup-flags"]);
const EVENTS_PATH = "/api/v1/flags/events";

// ---- clients ----------------------------------------------------------------------------------

function clientProcess() {
  const child: ChildProcess = fork(benchFile("stream-clients.ts"), [], { execArgv: ["--import", "tsx"] });
  let pending: ((reply: unknown) => void) | undefined;
  child.on("message", (reply) => pending?.(reply));
  const ask = <T>(msg: object) =>
    new Promise<T>((resolve) => {
      pending = (reply) => resolve(reply as T);
      child.send(msg);
    });
  return { ask, close: () => child.send({ type: "close" }) };
}

/**
 * Evaluates one flag every 2 ms on one keep-alive connection; `max` is the longest answer since
 * the last `reset`.
 */
function prober(url: string, key: string, flag: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ context: { targetingKey: "user-42", email: "ada@example.com" } });
  let running = true;
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
      await once();
      await pause(2);
    }
  })();
  return {
    reset: () => void ((max = 0), (count = 0)),
    get max() {
      return max;
    },
    get count() {
      return count;
    },
    async stop() {
      running = false;
      await loop;
      agent.destroy();
    },
  };
}

// ---- the three configurations ------------------------------------------------------------------

interface Config {
  label: string;
  short: string;
  server?: Started;
  /** The edited file, and its two versions (flag 0's defaultVariant off / on). */
  file: string;
  versions: [string, string];
  key: string;
  clients?: ReturnType<typeof clientProcess>;
  probe?: ReturnType<typeof prober>;
  flag: string;
  latencies: number[];
  maxEval: number;
}

/** One environment document of `count` flags as YAML, its first flag's defaultVariant set, with its own key. */
function environmentYaml(count: number, key: string, defaultVariant: string): string {
  const env = benchEnvironment(count);
  env.apiKey = key;
  env.flags[flagKey(0, count)]!.defaultVariant = defaultVariant;
  return stringify(env);
}

async function setUp(dir: string, label: string, short: string, files: number, flags: number): Promise<Config> {
  const root = join(dir, short);
  await mkdir(root);
  const keyOf = (i: number) => (files === 1 ? KEY : `${KEY}-${String(i).padStart(3, "0")}`);
  for (let i = 0; i < files; i++)
    await writeFile(join(root, `env-${String(i).padStart(3, "0")}.yaml`), environmentYaml(flags, keyOf(i), "off"));
  const edited = Math.floor(files / 2);
  const file = join(root, `env-${String(edited).padStart(3, "0")}.yaml`);
  const key = keyOf(edited);
  const versions: [string, string] = [environmentYaml(flags, key, "off"), environmentYaml(flags, key, "on")];
  return { label, short, file, versions, key, flag: flagKey(1, flags), latencies: [], maxEval: 0 };
}

async function measureEdits(configs: Config[], dir: string): Promise<void> {
  for (const config of configs) {
    config.server = await startFlagserve(join(dir, config.short), join(dir, `state-${config.short}`));
    config.clients = clientProcess();
    const port = Number(new URL(config.server.url).port);
    const opened = await config.clients.ask<{ failed: number }>({
      type: "open",
      port,
      path: EVENTS_PATH,
      key: config.key,
      count: 1,
      concurrency: 1,
    });
    if (opened.failed > 0) throw new Error(`${config.label}: the event stream could not be opened`);
    config.probe = prober(config.server.url, config.key, config.flag);
  }
  // Every file's last change is well in the past (as in a directory edited now and then).
  await pause(2500);
  for (let round = 0; round < EDITS; round++) {
    for (const config of round % 2 === 0 ? configs : [...configs].reverse()) {
      config.probe!.reset();
      const { latencies } = await config.clients!.ask<{ latencies: number[] }>({
        type: "edit",
        file: config.file,
        content: config.versions[(round + 1) % 2],
        timeoutMs: 30_000,
      });
      if (latencies[0]! < 0) throw new Error(`${config.label}: no flag-updated within 30 s of edit ${round + 1}`);
      await pause(PAUSE_MS);
      config.latencies.push(latencies[0]!);
      config.maxEval = Math.max(config.maxEval, config.probe!.max);
    }
  }
  for (const config of configs) {
    await config.probe!.stop();
    config.clients!.close();
    await stop(config.server!.child);
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

async function measureStartup(dir: string): Promise<{ ms: number; rss: number; peak: number; maxEval: number; evals: number }> {
  const root = join(dir, "startup");
  await writeBigEnvironment(root, STARTUP_FLAGS);
  const t0 = performance.now();
  const server = await startFlagserve(root, join(dir, "state-startup"));
  try {
    const probe = prober(server.url, KEY, flagKey(1, STARTUP_FLAGS));
    while (probe.count === 0) await pause(1);
    const ms = performance.now() - t0;
    const memory = memoryOf(server.child.pid!);
    probe.reset();
    await pause(2000);
    const result = { ms, ...memory, maxEval: probe.max, evals: probe.count };
    await probe.stop();
    return result;
  } finally {
    await stop(server.child);
  }
}

// ---- report -----------------------------------------------------------------------------------

await withTempDir(async (dir) => {
  header(`${EDITS} edits per configuration, ${PAUSE_MS} ms apart; start-up at ${STARTUP_FLAGS} flags`);
  const configs = [
    await setUp(dir, "one environment, one file of 100 flags", "100", 1, 100),
    await setUp(dir, "one environment, one file of 10 000 flags", "10000", 1, 10_000),
    await setUp(dir, "100 environment files of 100 flags, one edited", "100x100", 100, 100),
  ];
  await measureEdits(configs, dir);
  const base = median(configs[0]!.latencies);
  printTable(
    ["configuration", "edit -> flag-updated p50 ms", "max ms", "ratio to 100 flags", "longest evaluation meanwhile, ms"],
    configs.map((c) => [
      c.label,
      median(c.latencies).toFixed(1),
      Math.max(...c.latencies).toFixed(1),
      ratio(median(c.latencies), base),
      c.maxEval.toFixed(1),
    ]),
  );
  printRatios(
    "bench:reload (edit p50 / 100 flags)",
    configs.slice(1).map((c) => [c.short, ratio(median(c.latencies), base)]),
  );
  if (STARTUP_FLAGS === 0) return;
  const start = await measureStartup(dir);
  console.log();
  printTable(
    ["start-up", "value"],
    [
      [`spawn -> first answer, ${STARTUP_FLAGS} flags, ms`, start.ms.toFixed(0)],
      ["RSS at the first answer, MB", (start.rss / 1e6).toFixed(0)],
      ["peak RSS until then, MB", (start.peak / 1e6).toFixed(0)],
      [`longest evaluation in the 2 s after (${start.evals} evaluations), ms`, start.maxEval.toFixed(1)],
    ],
  );
});
