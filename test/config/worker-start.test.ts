/**
 * A server that watches files parses them in the parse worker from its first load on, so that the
 * worker is running (and warm: it reads its first document again while idle) before the first
 * edit. The built server (dist/), as the CLI runs it: the worker cannot run from the sources. Run
 * in a process of its own (vitest.config.ts), for a worker no other test started.
 */
import { describe, expect, it } from "vitest";
import type * as Parse from "../../src/config/parse.js";
import type * as Server from "../../src/server/server.js";
import { tempDir } from "../helpers/files.js";
import { serveFlagsDir } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
const { startServer } = (await dist("server/server.js")) as typeof Server;
const { parseWorkerRunning } = (await dist("config/parse.js")) as typeof Parse;

const flag = (defaultVariant: string) => ({ variants: { on: true, off: false }, defaultVariant });
const dev = { apiKey: "worker-start-key-0123", flags: { f: flag("off") } };
/** Big enough that the worker's reads of it again (one per turn of its event loop) last a while. */
const bigDev = (f7: string) => ({
  ...dev,
  flags: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`f${i}`, flag(i === 7 ? f7 : "off")])),
});

describe("the parse worker", () => {
  it("is not started by a server of data given inline (nothing of it is parsed again), and is by the first load of one of files, then serves an edit made at once", async () => {
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
    await dir.write("flags/dev.yaml", JSON.stringify(bigDev("off")));
    const files = await serveFlagsDir(dir, {}, startServer);
    try {
      // Started by the first load itself, before the server answered.
      expect(parseWorkerRunning()).toBe(true);
      // Read while the worker reads the first version again.
      await dir.write("flags/dev.yaml", JSON.stringify(bigDev("on")));
      const init = { method: "POST", headers: { "x-api-key": dev.apiKey, "content-type": "application/json" }, body: "{}" };
      const f7 = async () => ((await (await fetch(`${files.url}/ofrep/v1/evaluate/flags/f7`, init)).json()) as { value?: boolean }).value;
      await until("the edit to be served", async () => (await f7()) === true);
    } finally {
      await files.close();
    }
  });
});
