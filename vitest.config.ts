import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Most of the suite's time is spent waiting on servers, watchers, browsers and child
    // processes, not computing: run more files at once than there are cores (vitest's default
    // is one fewer than the cores, a single worker on a 2-core machine).
    maxWorkers: Math.max(4, availableParallelism() * 2),
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
