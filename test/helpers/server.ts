/** A server in this process over a test directory's flags: the one way the tests start one (and a reload's context without one). */
import type { EnvironmentChange, ReloadContext } from "../../src/changes/reload.js";
import { EventHub } from "../../src/events/hub.js";
import { silentLogger } from "../../src/log/logger.js";
import { FlagStore } from "../../src/store/store.js";
import { startServer, type RunningServer, type ServerOptions } from "../../src/server/server.js";
import type { TempDir } from "./files.js";

/**
 * Serves DIR/flags on a free loopback port, state in DIR/state, logging nothing (unless `options`
 * say otherwise). `start` is another build's startServer (the built one in dist/, say).
 */
export const serveFlagsDir = (dir: TempDir, options: Partial<ServerOptions> = {}, start = startServer): Promise<RunningServer> =>
  start({
    source: { path: dir.file("flags") },
    port: 0,
    host: "127.0.0.1",
    stateDir: dir.file("state"),
    logger: silentLogger,
    ...options,
  });

/** What applyLoad needs, without a server: a fresh store and hub (no flagd streams), keys kept in `stateDir` with no grace, every change list given to `onChanges`. */
export const reloadContext = (stateDir: string, onChanges: (changes: EnvironmentChange[]) => void): ReloadContext => ({
  store: new FlagStore(),
  hub: new EventHub({ heartbeatSeconds: 3600 }),
  logger: silentLogger,
  stateDir,
  keyGraceSeconds: 0,
  keysRevoked: () => undefined,
  onChanges,
});
