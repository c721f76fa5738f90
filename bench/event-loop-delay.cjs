/**
 * Preloaded into a server under bench (`node --require`): how long the serving thread's event loop
 * was held, measured inside the process, so that what other processes cost the machine is left
 * out of it (the parse worker's own loop is not measured: it holds nothing up), and the garbage
 * collections that held it, and how long it was busy. Each SIGUSR2 writes `<signals so far>
 * <longest delay, ms> <full collections> <longest collection pause, ms> <busy ms>`, all since the
 * last signal, to the file named by BENCH_EVENT_LOOP_FILE, and starts a new window.
 */
const { writeFileSync } = require("node:fs");
const { constants, monitorEventLoopDelay, performance, PerformanceObserver } = require("node:perf_hooks");
const { isMainThread } = require("node:worker_threads");

const file = process.env.BENCH_EVENT_LOOP_FILE;
if (isMainThread && file) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let fullCollections = 0;
  let longestPause = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++;
      longestPause = Math.max(longestPause, entry.duration);
    }
  }).observe({ entryTypes: ["gc"] });
  let signals = 0;
  let utilization = performance.eventLoopUtilization();
  process.on("SIGUSR2", () => {
    const busy = performance.eventLoopUtilization(utilization).active;
    utilization = performance.eventLoopUtilization();
    writeFileSync(file, `${++signals} ${(delay.max / 1e6).toFixed(1)} ${fullCollections} ${longestPause.toFixed(1)} ${busy.toFixed(1)}`);
    delay.reset();
    fullCollections = 0;
    longestPause = 0;
  });
}
