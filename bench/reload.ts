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
 * (the client is bench/stream-clients.ts, in a process of its own, which also writes the file, given
 * its text before the window starts).
 * Meanwhile this process evaluates one flag every 2 ms on a keep-alive connection to the server
 * being edited, until --pause ms after the event; the longest of those evaluations says how long a
 * request waited behind a reload. Its baseline is the longest evaluation in as many windows as
 * long on the same server just before each edit: what the machine alone costs. The same two
 * windows are also measured inside each server (bench/event-loop-delay.cjs, preloaded): the
 * longest event-loop delay of its serving thread, which leaves the other processes' share of the
 * two cores out (though not the scheduler's), and its full garbage collections, longest
 * collection pause and busy time (a second table: the busy time of a reload's window, less that
 * of a window without one, is what the reload cost the serving thread). A third table splits the
 * serving thread's delays (on Linux, from its scheduler statistics): the longest it was held by
 * its own work (a turn of a 1 ms timer, less its wait for a CPU in that turn), and its longest
 * wait for a CPU while ready to run; beside them, the longest wait for a CPU of a process that
 * does nothing but that timer, in the same windows: what the machine alone cost any process then.
 *
 * Then start-up at --startup-flags flags (one environment: a directory of files of 10 000 flags,
 * as one file may hold at most 10 MiB): spawn -> first answer, RSS then, and the longest
 * evaluation in the next two seconds (one every 2 ms).
 *
 *   npm run bench:reload
 *   npm run bench:reload -- --edits 5 --startup-flags 20000   # a quick check
 *   npm run bench:reload -- --startup-flags 0                  # the edits alone
 *   npm run bench:reload -- --against ../other/bin/flagserve.js  # also the 10 000-flag file on another build
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import {
  BIN,
  benchEnvironment,
  benchFile,
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
  startFlagserve,
  startNode,
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
 * Evaluates one flag every 2 ms on one keep-alive connection while `active` (only the server
 * being measured is asked: the others' answers would only be load on the machine); `max` is the
 * longest answer since the last `reset`.
 */
function prober(url: string, key: string, flag: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ context: { targetingKey: "user-42", email: "ada@example.com" } });
  let running = true;
  let active = true;
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

/** What a server's serving thread went through in one window (bench/event-loop-delay.cjs). */
interface LoopWindow {
  /** The longest event-loop delay, ms. */
  delay: number;
  /** Full (mark-compact) garbage collections. */
  fullCollections: number;
  /** The longest collection pause (full or young), ms. */
  longestPause: number;
  /** How long the serving thread was busy (event-loop utilization's active time), ms. */
  busy: number;
  /** The longest a turn of its 1 ms timer took less its wait for a CPU in it, and the longest such wait, ms (NaN without /proc). */
  held: number;
  cpuWait: number;
}

/**
 * The server's own measure of its event loop (bench/event-loop-delay.cjs, preloaded): `window()`
 * ends the current window and returns what happened in it.
 */
function loopDelay(file: string) {
  let signals = 0;
  return {
    spawn: { nodeArgs: ["--require", benchFile("event-loop-delay.cjs")], env: { BENCH_EVENT_LOOP_FILE: file } },
    child: undefined as ChildProcess | undefined,
    async window(): Promise<LoopWindow> {
      this.child!.kill("SIGUSR2");
      signals++;
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        const [seen, delay, fullCollections, longestPause, busy, held, cpuWait] = (await readFile(file, "utf8").catch(() => "0"))
          .split(" ")
          .map(Number);
        if (seen === signals)
          return {
            delay: delay!,
            fullCollections: fullCollections!,
            longestPause: longestPause!,
            busy: busy!,
            held: held!,
            cpuWait: cpuWait!,
          };
        await pause(1);
      }
      throw new Error(`the server did not report its event-loop delay within 10 s (${file})`);
    },
  };
}

// ---- the three configurations ------------------------------------------------------------------

interface Config {
  label: string;
  short: string;
  server?: Started;
  /** Another build's bin/flagserve.js serving it (--against), else this build. */
  bin?: string;
  /** The edited file, and its two versions (flag 0's defaultVariant off / on). */
  file: string;
  versions: [string, string];
  key: string;
  clients?: ReturnType<typeof clientProcess>;
  probe?: ReturnType<typeof prober>;
  loopDelay?: ReturnType<typeof loopDelay>;
  flag: string;
  latencies: number[];
  /** The windows of the edits' reloads, and as many windows as long without an edit. */
  reloads: Windows;
  idle: Windows;
}

/** What a configuration's windows of one kind saw, together. */
interface Windows {
  /** The longest evaluation. */
  maxEval: number;
  /** The serving thread's longest event-loop delay, its full garbage collections and longest collection pause. */
  maxDelay: number;
  fullCollections: number;
  maxPause: number;
  /** How long its serving thread was busy, each window. */
  busy: number[];
  /** Its longest hold by its own work and longest wait for a CPU; an idle process's longest wait for a CPU. */
  maxHeld: number;
  maxCpuWait: number;
  maxIdleCpuWait: number;
}

const noWindows = (): Windows => ({
  maxEval: 0,
  maxDelay: 0,
  fullCollections: 0,
  maxPause: 0,
  busy: [],
  maxHeld: 0,
  maxCpuWait: 0,
  maxIdleCpuWait: 0,
});

/** Adds one window, with the longest evaluation the probe saw in it and what the idle process saw in it. */
function addWindow(windows: Windows, loop: LoopWindow, maxEval: number, idleProcess: LoopWindow): void {
  windows.maxEval = Math.max(windows.maxEval, maxEval);
  windows.maxDelay = Math.max(windows.maxDelay, loop.delay);
  windows.fullCollections += loop.fullCollections;
  windows.maxPause = Math.max(windows.maxPause, loop.longestPause);
  windows.busy.push(loop.busy);
  windows.maxHeld = Math.max(windows.maxHeld, loop.held);
  windows.maxCpuWait = Math.max(windows.maxCpuWait, loop.cpuWait);
  windows.maxIdleCpuWait = Math.max(windows.maxIdleCpuWait, idleProcess.cpuWait);
}

/**
 * A process that does nothing but bench/event-loop-delay.cjs's 1 ms timers, measured in the same
 * windows as the server being edited: what the machine alone cost a process then.
 */
function idleProcess(file: string): ReturnType<typeof loopDelay> {
  const measure = loopDelay(file);
  // It leaves when this process does (its IPC channel closes), however this one ends.
  const script = 'process.on("disconnect", () => process.exit()); setInterval(() => {}, 2 ** 30);';
  const child = spawn(process.execPath, [...measure.spawn.nodeArgs, "-e", script], {
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    env: { ...process.env, ...measure.spawn.env },
  });
  child.unref();
  child.channel?.unref();
  measure.child = child;
  return measure;
}

async function setUp(dir: string, label: string, short: string, files: number, flags: number, bin?: string): Promise<Config> {
  const root = join(dir, short);
  await mkdir(root);
  const keyOf = (i: number) => (files === 1 ? KEY : `${KEY}-${String(i).padStart(3, "0")}`);
  for (let i = 0; i < files; i++)
    await writeFile(join(root, `env-${String(i).padStart(3, "0")}.yaml`), environmentYaml(flags, "off", keyOf(i)));
  const edited = Math.floor(files / 2);
  const file = join(root, `env-${String(edited).padStart(3, "0")}.yaml`);
  const key = keyOf(edited);
  const versions: [string, string] = [environmentYaml(flags, "off", key), environmentYaml(flags, "on", key)];
  return {
    label,
    short,
    bin,
    file,
    versions,
    key,
    flag: flagKey(1, flags),
    latencies: [],
    reloads: noWindows(),
    idle: noWindows(),
  };
}

async function measureEdits(configs: Config[], dir: string): Promise<void> {
  const idle = idleProcess(join(dir, "event-loop-idle-process"));
  for (const config of configs) {
    const [path, state] = [join(dir, config.short), join(dir, `state-${config.short}`)];
    config.loopDelay = loopDelay(join(dir, `event-loop-${config.short}`));
    config.server = await startNode(
      config.bin ?? BIN,
      [path, "--port", "0", "--quiet", "--state-dir", state],
      "inherit",
      config.loopDelay.spawn,
    );
    config.loopDelay.child = config.server.child;
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
    config.probe.active = false;
  }
  // Every file's last change is well in the past (as in a directory edited now and then).
  await pause(2500);
  for (let round = 0; round < EDITS; round++) {
    for (const config of round % 2 === 0 ? configs : [...configs].reverse()) {
      const probe = config.probe!;
      const delay = config.loopDelay!;
      // Ends the server's window and the idle process's together, and adds what they saw to `into`.
      const windows = async (into?: Windows) => {
        const [server, idleProcess] = await Promise.all([delay.window(), idle.window()]);
        if (into) addWindow(into, server, probe.max, idleProcess);
      };
      await config.clients!.ask({ type: "prepare", file: config.file, content: config.versions[(round + 1) % 2] });
      // The baseline: as long a window on the same server with no edit.
      probe.reset();
      probe.active = true;
      await windows();
      await pause(PAUSE_MS);
      await windows(config.idle);
      probe.reset();
      const { latencies } = await config.clients!.ask<{ latencies: number[] }>({ type: "edit", timeoutMs: 30_000 });
      if (latencies[0]! < 0) throw new Error(`${config.label}: no flag-updated within 30 s of edit ${round + 1}`);
      await pause(PAUSE_MS);
      await windows(config.reloads);
      probe.active = false;
      config.latencies.push(latencies[0]!);
    }
  }
  for (const config of configs) {
    await config.probe!.stop();
    config.clients!.close();
    await stop(config.server!.child);
  }
  idle.child!.kill();
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
  if (values.against) {
    header(`beside: ${values.against}`);
    configs.push(
      await setUp(dir, "one environment, one file of 10 000 flags, the --against build", "10000-against", 1, 10_000, values.against),
    );
  }
  await measureEdits(configs, dir);
  const base = median(configs[0]!.latencies);
  printTable(
    [
      "configuration",
      "edit -> flag-updated p50 ms",
      "max ms",
      "ratio to 100 flags",
      "longest evaluation during the reloads, ms",
      "without a reload, ms",
      "serving thread's longest event-loop delay during the reloads, ms",
      "without a reload, ms",
    ],
    configs.map((c) => [
      c.label,
      median(c.latencies).toFixed(1),
      Math.max(...c.latencies).toFixed(1),
      ratio(median(c.latencies), base),
      c.reloads.maxEval.toFixed(1),
      c.idle.maxEval.toFixed(1),
      c.reloads.maxDelay.toFixed(1),
      c.idle.maxDelay.toFixed(1),
    ]),
  );
  console.log();
  printTable(
    [
      "configuration",
      "serving thread's full garbage collections during the reloads",
      "without a reload",
      "its longest collection pause during the reloads, ms",
      "without a reload, ms",
      "its busy time per reload's window, median ms",
      "without a reload, ms",
    ],
    configs.map((c) => [
      c.label,
      c.reloads.fullCollections,
      c.idle.fullCollections,
      c.reloads.maxPause.toFixed(1),
      c.idle.maxPause.toFixed(1),
      median(c.reloads.busy).toFixed(1),
      median(c.idle.busy).toFixed(1),
    ]),
  );
  console.log();
  printTable(
    [
      "configuration",
      "serving thread's longest hold by its own work during the reloads, ms",
      "without a reload, ms",
      "its longest wait for a CPU during the reloads, ms",
      "without a reload, ms",
      "an idle process's longest wait for a CPU in the same windows, ms",
      "without a reload, ms",
    ],
    configs.map((c) => [
      c.label,
      c.reloads.maxHeld.toFixed(1),
      c.idle.maxHeld.toFixed(1),
      c.reloads.maxCpuWait.toFixed(1),
      c.idle.maxCpuWait.toFixed(1),
      c.reloads.maxIdleCpuWait.toFixed(1),
      c.idle.maxIdleCpuWait.toFixed(1),
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
