import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Test files that change state shared by the whole process (OpenFeature's global API, environment
 * variables, the working directory, spies on globals): each runs in a fresh process. The others
 * share their workers' loaded modules (isolate: false), which saves importing the sources again
 * for every file.
 */
const ISOLATED = [
  "test/admin/dashboard-browser.test.ts",
  "test/admin/fixture-routes.test.ts",
  "test/admin/overrides.test.ts",
  "test/api/create-flag-server.test.ts",
  "test/cli/session.test.ts",
  "test/config/load.test.ts",
  "test/config/worker-start.test.ts",
  "test/config/worker-warm-up.test.ts",
  "test/e2e/context-enrichment.test.ts",
  "test/e2e/faults.test.ts",
  "test/e2e/flag-metrics.test.ts",
  "test/e2e/flagd-web.test.ts",
  "test/e2e/flipswitch-browser.test.ts",
  "test/e2e/flipswitch.test.ts",
  "test/e2e/ofrep-stream.test.ts",
  "test/e2e/openfeature.test.ts",
  "test/e2e/sessions.test.ts",
  "test/sources/discover.test.ts",
];

export default defineConfig({
  test: {
    // Most of the suite's time is spent waiting on servers, watchers, browsers and child
    // processes, not computing: run more files at once than there are cores (vitest's default
    // is one fewer than the cores, a single worker on a 2-core machine).
    maxWorkers: Math.max(4, availableParallelism() * 2),
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The tests' state directories (store/state-dir.ts: per user, under $XDG_STATE_HOME) go to a
    // temporary directory of this run, removed at its end, not to the home directory of whoever
    // runs the tests. The CLI processes the tests start inherit it.
    env: { XDG_STATE_HOME: join(tmpdir(), `flagserve-test-state-${process.pid}`) },
    globalSetup: ["./test/helpers/state-home.ts"],
    // examples/ holds the README's runnable test files: they run with the suite, and the README's
    // `npx vitest run examples/...` finds them. They import "flagserve" as a project that installed
    // it would, which in the clone is the package itself (its built dist/).
    projects: [
      { extends: true, test: { name: "isolated", include: ISOLATED } },
      {
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts", "examples/**/*.test.ts"], exclude: ISOLATED, isolate: false },
      },
    ],
  },
});
