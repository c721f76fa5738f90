/**
 * The tests' state directories (store/state-dir.ts: per user, under $XDG_STATE_HOME) go to a
 * temporary directory of this run, removed at its end, not to the home directory of whoever
 * runs the tests. The CLI processes the tests start inherit it.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    env: { XDG_STATE_HOME: join(tmpdir(), `flagserve-test-state-${process.pid}`) },
    globalSetup: ["./test/helpers/state-home.ts"],
  },
});
