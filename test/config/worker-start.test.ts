/**
 * A running server starts the parse worker once it has answered and warmed up, so that even the
 * first edit of a small file is parsed off the serving thread. The built server (dist/), as the
 * CLI runs it: the worker cannot run from the sources. Run in a process of its own (vitest.config.ts), for a
 * worker no other test started.
 */
import { describe, expect, it, vi } from "vitest";
import type * as Parse from "../../src/config/parse.js";
import type * as Server from "../../src/server/server.js";
import { tempDir } from "../helpers/files.js";
import { serveFlagsDir } from "../helpers/server.js";

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
const { startServer } = (await dist("server/server.js")) as typeof Server;
const { parseWorkerRunning } = (await dist("config/parse.js")) as typeof Parse;

const dev = { apiKey: "worker-start-key-0123", flags: { f: { variants: { on: true, off: false }, defaultVariant: "off" } } };

describe("the parse worker", () => {
  it("is not started by a server of data given inline (nothing of it is parsed again), then is by one of files", async () => {
    const dir = await tempDir();
    const inline = await serveFlagsDir(dir, { source: { environments: { dev } } }, startServer);
    try {
      expect((await fetch(`${inline.url}/readyz`)).status).toBe(200);
      // Its ETags made (when a server of files would start the worker), and then some.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(parseWorkerRunning()).toBe(false);
    } finally {
      await inline.close();
    }
    await dir.write("flags/dev.yaml", JSON.stringify(dev));
    const files = await serveFlagsDir(dir, {}, startServer);
    try {
      await vi.waitFor(() => expect(parseWorkerRunning()).toBe(true), { timeout: 10_000 });
    } finally {
      await files.close();
    }
  });
});
