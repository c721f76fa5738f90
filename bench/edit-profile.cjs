/**
 * Preloaded into a server under bench:edit-cost (`node --require`): profiles its serving thread
 * between two SIGUSR2, with V8's own profilers through the inspector, and writes a summary to
 * the file named by BENCH_PROFILE_FILE: the thread's busy time (CPU profile samples that are not
 * idle), its garbage collection, what it allocated (a sampling heap profile that keeps the
 * samples of objects already collected), and the functions that took the most of each; and the
 * busy time of the parse worker (its event-loop utilization, not profiled), which the preload
 * measures in the worker thread too and reports over a BroadcastChannel.
 */
const { writeFileSync } = require("node:fs");
const { Session } = require("node:inspector");
const { performance } = require("node:perf_hooks");
const { BroadcastChannel, isMainThread } = require("node:worker_threads");

const file = process.env.BENCH_PROFILE_FILE;
const CHANNEL = "bench-edit-profile";

if (!isMainThread && file) {
  // In the parse worker: its busy time between the serving thread's "start" and "stop".
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  let from;
  channel.onmessage = ({ data }) => {
    if (data === "start") from = performance.eventLoopUtilization();
    else if (data === "stop" && from) channel.postMessage({ workerBusyMs: performance.eventLoopUtilization(from).active });
  };
}

if (isMainThread && file) {
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  let workerBusyMs = 0;
  channel.onmessage = ({ data }) => (workerBusyMs += data.workerBusyMs);
  const session = new Session();
  session.connect();
  const post = (method, params = {}) =>
    new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  let profiling = false;
  process.on("SIGUSR2", async () => {
    if (!profiling) {
      profiling = true;
      await post("Profiler.enable");
      await post("Profiler.setSamplingInterval", { interval: 100 });
      await post("HeapProfiler.enable");
      await post("HeapProfiler.startSampling", {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      await post("Profiler.start");
      channel.postMessage("start");
      return;
    }
    channel.postMessage("stop");
    const { profile } = await post("Profiler.stop");
    const { profile: heap } = await post("HeapProfiler.stopSampling");
    await new Promise((resolve) => setTimeout(resolve, 100)); // the worker's answer
    writeFileSync(file, JSON.stringify({ ...cpuSummary(profile), ...heapSummary(heap), workerBusyMs }));
  });
}

/** A frame as `function file:line`, the file's path shortened to its last two parts. */
const frameName = ({ functionName, url, lineNumber }) =>
  `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;

const top = (totals, n = 8) =>
  [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, value]) => [name, Math.round(value * 10) / 10]);

function cpuSummary(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  let busyMs = 0;
  let gcMs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const { callFrame } = byId.get(profile.samples[i]);
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (callFrame.functionName === "(idle)") continue;
    busyMs += ms;
    if (callFrame.functionName === "(garbage collector)") gcMs += ms;
    const name = frameName(callFrame);
    self.set(name, (self.get(name) ?? 0) + ms);
  }
  return { busyMs, gcMs, cpu: top(self) };
}

function heapSummary(profile) {
  const self = new Map();
  let allocated = 0;
  const walk = (node) => {
    if (node.selfSize > 0) {
      const name = frameName(node.callFrame);
      self.set(name, (self.get(name) ?? 0) + node.selfSize / 1e6);
      allocated += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { allocatedMB: allocated / 1e6, allocations: top(self) };
}
