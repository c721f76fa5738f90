/**
 * Preloaded into a server under bench (`node --require`): how long the serving thread's event loop
 * was held, measured inside the process, so that what other processes cost the machine is left
 * out of it (the parse worker's own loop is not measured: it holds nothing up), and the garbage
 * collections that held it, and how long it was busy. On Linux also where a delay went, from the
 * thread's own scheduler statistics (/proc/thread-self/schedstat, whose time spent waiting for a
 * CPU is exact), read on a 1 ms timer: of the longest time between two of those reads, how long
 * the thread waited for a CPU while ready to run (the machine's share: other threads and
 * processes had the cores), and the longest time between two reads less that wait (the server's
 * own share: its work and collections, blocked or running; what held a request at most, the
 * timer's 1 ms included). Each SIGUSR2 writes `<signals so far> <longest delay, ms> <full
 * collections> <longest collection pause, ms> <busy ms> <longest held, ms> <longest wait for a
 * CPU, ms>` (the last two NaN without /proc), all since the last signal, to the file named by
 * BENCH_EVENT_LOOP_FILE, and starts a new window. Preloaded into an idle process, it measures what
 * the machine alone costs a process.
 */
const { openSync, readSync, renameSync, writeFileSync } = require("node:fs");
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
  const scheduler = schedulerTimes();
  let signals = 0;
  let utilization = performance.eventLoopUtilization();
  process.on("SIGUSR2", () => {
    const busy = performance.eventLoopUtilization(utilization).active;
    utilization = performance.eventLoopUtilization();
    const { longestHeld, longestWait } = scheduler.window();
    const fields = [++signals, delay.max / 1e6, fullCollections, longestPause, busy, longestHeld, longestWait];
    // Renamed into place: the benchmark reads the file while it waits, and must never see half of it.
    writeFileSync(`${file}.new`, fields.map((n, i) => (i === 0 || i === 2 ? String(n) : n.toFixed(1))).join(" "));
    renameSync(`${file}.new`, file);
    delay.reset();
    fullCollections = 0;
    longestPause = 0;
  });
}

/** Per window, the longest time a 1 ms timer's turn took less its wait for a CPU, and the longest such wait (ms); NaN without /proc. */
function schedulerTimes() {
  let fd;
  try {
    fd = openSync("/proc/thread-self/schedstat", "r");
  } catch {
    return { window: () => ({ longestHeld: NaN, longestWait: NaN }) };
  }
  const buffer = Buffer.alloc(128);
  // "<ns on a CPU> <ns waiting for one> <timeslices>": the wait, in ms.
  const waitedMs = () => Number(buffer.toString("latin1", 0, readSync(fd, buffer, 0, buffer.length, 0)).split(" ")[1]) / 1e6;
  let [at, waited] = [performance.now(), waitedMs()];
  let longestHeld = 0;
  let longestWait = 0;
  setInterval(() => {
    const [now, wait] = [performance.now(), waitedMs()];
    longestHeld = Math.max(longestHeld, now - at - (wait - waited));
    longestWait = Math.max(longestWait, wait - waited);
    [at, waited] = [now, wait];
  }, 1).unref();
  return {
    window() {
      const seen = { longestHeld, longestWait };
      longestHeld = longestWait = 0;
      return seen;
    },
  };
}
