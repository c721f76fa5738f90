/**
 * A server that watches files parses them in the parse worker from its first load on, so that the
 * worker is running (and warm) before the first edit. The built server (dist/), as the CLI runs
 * it: the worker cannot run from the sources. Run in a process of its own (vitest.config.ts), for a
 * worker no other test started.
 */
import { describe, expect, it } from "vitest";
import type * as Parse from "../../src/config/parse.js";
import type * as Server from "../../src/server/server.js";
import { tempDir } from "../helpers/files.js";
import { serveFlagsDir } from "../helpers/server.js";

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
const { startServer } = (await dist("server/server.js")) as typeof Server;
const { parseWorkerRunning } = (await dist("config/parse.js")) as typeof Parse;

const dev = { apiKey: "worker-start-key-0123", flags: { f: { variants: { on: true, off: false }, defaultVariant: "off" } } };

describe("the parse worker", () => {
  it("is not started by a server of data given inline (nothing of it is parsed again), and is by the first load of one of files", async () => {
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
      // Started by the first load itself, before the server answered.
      expect(parseWorkerRunning()).toBe(true);
    } finally {
      await files.close();
    }
  });
});
