/**
 * What the benchmarks share: the flag and context fixtures, starting and stopping servers,
 * process memory, statistics and the printed tables. Everything runs on 127.0.0.1.
 */
import { execFileSync, fork, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";

export const KEY = "bench-key-0123456789";
export const BIN = fileURLToPath(new URL("../bin/flagserve.js", import.meta.url));
export const benchFile = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

// ---- fixtures -------------------------------------------------------------------------------

export const flagKey = (i: number, count: number) => `flag-${String(i).padStart(Math.max(3, String(count - 1).length), "0")}`;

/**
 * The targeting of flag i, by i % 10: static (2 in 10), a segment `$ref` with `ends_with`, `in`,
 * `starts_with` with a `$ref`, `sem_ver` (2 in 10: `>=` and `^`), `fractional` (3 in 10: by
 * targeting key, by an expression, nested in an `if`). Every 50th flag is DISABLED.
 */
function benchFlag(i: number): Record<string, unknown> {
  const onOff = { variants: { on: true, off: false }, defaultVariant: "off" };
  const flag = ((): Record<string, unknown> => {
    switch (i % 10) {
      case 0:
        return onOff;
      case 1:
        return { ...onOff, targeting: { if: [{ $ref: "beta" }, "on", null] } };
      case 2:
        return {
          ...onOff,
          targeting: {
            fractional: [
              ["on", 25],
              ["off", 75],
            ],
          },
        };
      case 3:
        return {
          variants: { new: "new", old: "old" },
          defaultVariant: "old",
          targeting: { if: [{ sem_ver: [{ var: "version" }, ">=", "2.1.0"] }, "new", "old"] },
        };
      case 4:
        return {
          variants: { eu: "eu", other: "other" },
          defaultVariant: "other",
          targeting: { if: [{ in: [{ var: "country" }, ["DE", "FR", "NL"]] }, "eu", "other"] },
        };
      case 5:
        return { variants: { small: { color: "blue", size: 1 }, large: { color: "red", size: 3 } }, defaultVariant: "small" };
      case 6:
        return {
          variants: { a: 1, b: 2 },
          defaultVariant: "a",
          targeting: { fractional: [{ cat: [{ var: "$flagd.flagKey" }, { var: "email" }] }, ["a", 50], ["b", 50]] },
        };
      case 7:
        return { ...onOff, targeting: { if: [{ and: [{ $ref: "internal" }, { starts_with: [{ var: "plan" }, "pro"] }] }, "on", "off"] } };
      case 8:
        return {
          variants: { v3: "v3", other: "other" },
          defaultVariant: "other",
          targeting: { if: [{ sem_ver: [{ var: "version" }, "^", "3.0.0"] }, "v3", null] },
        };
      default:
        return {
          ...onOff,
          targeting: {
            if: [
              { $ref: "beta" },
              {
                fractional: [
                  ["on", 50],
                  ["off", 50],
                ],
              },
              "off",
            ],
          },
        };
    }
  })();
  return i % 50 === 49 ? { state: "DISABLED", ...flag } : { state: "ENABLED", ...flag };
}

/** One environment document in flagd's format (segments as `$evaluators`), with `count` flags. */
export function benchEnvironment(count = 100): {
  apiKey: string;
  $evaluators: Record<string, unknown>;
  flags: Record<string, Record<string, unknown>>;
} {
  const flags: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < count; i++) flags[flagKey(i, count)] = benchFlag(i);
  return {
    apiKey: KEY,
    $evaluators: {
      beta: { ends_with: [{ var: "email" }, "@example.com"] },
      internal: { starts_with: [{ var: "targetingKey" }, "user-1"] },
    },
    flags,
  };
}

/** The same environment as a block-style YAML file, as a person would write it. */
export const benchYaml = (count = 100): string => stringify(benchEnvironment(count));

/** One environment document of `count` flags as YAML, its first flag's defaultVariant set (the edited versions of the reload benchmarks), with `key`. */
export function environmentYaml(count: number, defaultVariant: string, key = KEY): string {
  const env = benchEnvironment(count);
  env.apiKey = key;
  env.flags[flagKey(0, count)]!.defaultVariant = defaultVariant;
  return stringify(env);
}

/** The one request body of the repeated-request rows (bench:http, bench:instructions). */
export const ONE_BODY = JSON.stringify({
  context: { targetingKey: "user-42", email: "ada@example.com", country: "DE", plan: "pro", version: "3.1.4" },
});

const COUNTRIES = ["DE", "US", "FR", "JP", "NL", "BR"];
const PLANS = ["pro", "pro-plus", "free", "team"];

/**
 * `count` distinct OFREP contexts. Every 97th targeting key is non-ASCII (hashed differently by
 * @openfeature/flagd-core, see bench/engine.ts); every 11th version is a pre-release.
 */
export function benchContexts(count: number): Record<string, string>[] {
  return Array.from({ length: count }, (_, j) => ({
    targetingKey: j % 97 === 96 ? `usér-${j}` : `user-${j}`,
    email: j % 3 === 1 ? `u${j}@corp.test` : `u${j}@example.com`,
    country: COUNTRIES[j % COUNTRIES.length]!,
    plan: PLANS[j % PLANS.length]!,
    version: `${(j % 4) + 1}.${j % 7}.${j % 3}${j % 11 === 0 ? "-rc.1" : ""}`,
  }));
}

/**
 * The floor of reading a flag file, as the arguments of a bare `node` process: read FILE and
 * parse it with flagserve's own reader alone (`readYaml` from dist/: the nesting check, then
 * js-yaml with YAML's core schema), with no other check at all. The baseline of the validate rows.
 */
const READ_YAML = new URL("../dist/config/parse.js", import.meta.url).href;
export const readFloorArgs = (file: string): string[] => [
  "--input-type=module",
  "-e",
  `import { readFileSync } from "node:fs"; import { readYaml } from ${JSON.stringify(READ_YAML)};
   if (!("value" in readYaml(process.argv[1], readFileSync(process.argv[1], "utf8")))) throw new Error("the file could not be read");`,
  file,
];

// ---- processes ------------------------------------------------------------------------------

export interface Started {
  child: ChildProcess;
  url: string;
  /** ms from spawn to the `ready <url>` line. */
  readyMs: number;
}

/**
 * Spawns `node script ...args` and resolves once it prints `ready <url>` (flagserve and the
 * baselines do). stderr is shown, or with "drain" read and dropped (as a log collector would).
 */
export function startNode(
  script: string,
  args: string[] = [],
  stderr: "inherit" | "drain" = "inherit",
  { nodeArgs = [] as string[], env = {} as Record<string, string> } = {},
): Promise<Started> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    stdio: ["ignore", "pipe", stderr === "drain" ? "pipe" : "inherit"],
    env: { ...process.env, ...env },
  });
  child.stderr?.resume();
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /^ready (\S+)$/m.exec(out);
      if (match) resolve({ child, url: match[1]!, readyMs: performance.now() - startedAt });
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code} before it was ready: ${out}`)));
  });
}

/** flagserve itself (the built CLI) on a free port: `--quiet` unless `logs`, then its log lines are drained. */
export const startFlagserve = (path: string, stateDir: string, { logs = false, extra = [] as string[] } = {}) =>
  startNode(BIN, [path, "--port", "0", ...(logs ? [] : ["--quiet"]), "--state-dir", stateDir, ...extra], logs ? "drain" : "inherit");

/**
 * flagserve's exact reply to one POST (status, headers but the per-connection ones, body), as the
 * argument `bench/baseline-server.mjs` takes to send the very same bytes.
 */
export async function replyFor(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
  expectedStatus: number,
): Promise<string> {
  const res = await fetch(`${url}${path}`, { method: "POST", headers: { "x-api-key": KEY, ...headers }, body });
  if (res.status !== expectedStatus) throw new Error(`POST ${path}: flagserve answered ${res.status}, expected ${expectedStatus}`);
  const kept: Record<string, string> = {};
  for (const [name, value] of res.headers)
    if (!["date", "connection", "keep-alive", "transfer-encoding"].includes(name)) kept[name] = value;
  return JSON.stringify({ status: res.status, headers: kept, body: await res.text() });
}

/**
 * bench/stream-clients.ts in a process of its own (event streams, and the edits they time): `ask`
 * sends one message and resolves to its reply; `close` resolves once the process has exited.
 */
export function streamClients(): { ask<T>(msg: object): Promise<T>; close(): Promise<void> } {
  const child: ChildProcess = fork(benchFile("stream-clients.ts"), [], { execArgv: ["--import", "tsx"] });
  let pending: { resolve(reply: unknown): void; reject(error: Error): void } | undefined;
  child.on("message", (reply) => pending?.resolve(reply));
  child.on("exit", (code) => pending?.reject(new Error(`stream clients exited with ${code}`)));
  return {
    ask: <T>(msg: object) =>
      new Promise<T>((resolve, reject) => {
        pending = { resolve: (reply) => resolve(reply as T), reject };
        child.send(msg);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        pending = { resolve: () => {}, reject: () => resolve() };
        child.send({ type: "close" });
      }),
  };
}

export const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    child.removeAllListeners("exit");
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "flagserve-bench-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Resident and peak resident memory of a process, in bytes, from /proc/PID/status (NaN without /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  let status = "";
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    // not Linux: the memory rows show NaN
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/**
 * CPU time (user + system) a process has used so far, in µs, from /proc/PID/stat (NaN without
 * /proc). Clock ticks are 10 ms on most Linux systems: measure over seconds, not requests.
 */
export function cpuMicrosOf(pid: number): number {
  let stat = "";
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return NaN;
  }
  // Fields after the parenthesised command name (which may hold spaces): utime is the 12th, stime the 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/** Clock ticks per second (`getconf CLK_TCK`), 100 where it cannot be read. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The soft limit on open files that child processes inherit. */
export const openFileLimit = (): number => Number(execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).trim());

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- statistics and output ------------------------------------------------------------------

export const median = (values: number[]): number => percentile(values, 50);

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** flagserve / baseline, two decimals. */
export const ratio = (ours: number, theirs: number): string => (ours / theirs).toFixed(2);

export const ms = (n: number) => n.toFixed(1);

/** Prints a Markdown table (right-aligned numbers). */
export function printTable(headers: string[], rows: (string | number)[][]): void {
  console.log(`| ${headers.join(" | ")} |`);
  console.log(
    `|---|${headers
      .slice(1)
      .map(() => "---:")
      .join("|")}|`,
  );
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

/** The one line a benchmark ends with: its name and every ratio it measured. */
export function printRatios(name: string, ratios: [label: string, value: string][]): void {
  console.log(`\n${name} ratios: ${ratios.map(([label, value]) => `${label} ${value}`).join("; ")}`);
}

export const header = (what: string) => console.log(`node ${process.version}, ${what}\n`);
