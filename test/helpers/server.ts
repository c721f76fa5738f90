/** A server in this process over a test directory's flags: the one way the tests start one. */
import { silentLogger } from "../../src/log/logger.js";
import { startServer, type RunningServer, type ServerOptions } from "../../src/server/server.js";
import type { TempDir } from "./files.js";

/** Serves DIR/flags on a free loopback port, state in DIR/state, logging nothing (unless `options` say otherwise). */
export const serveFlagsDir = (dir: TempDir, options: Partial<ServerOptions> = {}): Promise<RunningServer> =>
  startServer({
    source: { path: dir.file("flags") },
    port: 0,
    host: "127.0.0.1",
    stateDir: dir.file("state"),
    logger: silentLogger,
    ...options,
  });
