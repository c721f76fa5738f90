/**
 * Admin: the overrides layer, the admin token, and (unless turned off) the admin API and the
 * dashboard page. The server wires it in: `layer` goes into every load, `onChanges` feeds the
 * page's stream, `register` adds the routes, `bind` gives it the reload path (re-applying the
 * layer, `keys revoke`).
 */
import type { OfrepAnswerer } from "../answers/ofrep-answers.js";
import type { H3 } from "h3";
import type { EnvironmentChange } from "../changes/reload.js";
import type { ConfigLoad } from "../config/index.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { SessionStore } from "../fixture/sessions.js";
import type { Metrics } from "../http/metrics.js";
import type { Logger } from "../log/logger.js";
import type { FlagStore } from "../store/store.js";
import { AdminFeed } from "./feed.js";
import { allowedHosts } from "../http/hosts.js";
import { OverrideLayer } from "./overrides.js";
import { registerPage } from "./page.js";
import { registerAdminGuard, registerAdminRoutes } from "./routes.js";
import { createOverrideService, type OverrideService } from "./service.js";
import { resolveAdminToken } from "./token.js";

export { AdminError } from "./errors.js";
export type { Override, OverrideList } from "./overrides.js";
export type { OverrideService } from "./service.js";

export interface AdminOptions {
  store: FlagStore;
  logger: Logger;
  stateDir: string;
  /** false: no admin API and no page (overrides stay available in-process). */
  enabled: boolean;
  /** `--admin-token`; else FLAGSERVE_ADMIN_TOKEN, else kept in the state directory. */
  token?: string;
  /** `--overrides FILE`: overrides kept across restarts. */
  overridesFile?: string;
  listenHost: string;
  /** Host names the admin API answers to besides loopback and the listen address. */
  hosts?: string[];
  maxBodyBytes: number;
  metrics: Metrics;
  /** The fault rules and recorded sessions the admin API shows and changes. */
  faults: FaultInjector;
  sessions: SessionStore;
}

/** The reload path, as the admin uses it once the server has built it. */
export interface AdminReload {
  /**
   * How an override change re-applies an environment: the same path a reload takes, given a
   * load of the environment's last file definition (built once earlier applies are done).
   */
  apply(load: () => ConfigLoad): Promise<unknown>;
  /** Ends the grace of an environment's replaced keys now; returns how many (`keys revoke`). */
  revokeOldKeys(env: string): number;
}

export interface Admin {
  layer: Pick<OverrideLayer, "apply" | "remove">;
  overrides: OverrideService;
  /** Undefined with the admin API off. */
  token?: string;
  /** The token is the one kept in the state directory (not given): the server records its URL beside it. */
  tokenInState: boolean;
  onChanges(changes: readonly EnvironmentChange[]): void;
  bind(reload: AdminReload): void;
  /** `answerer`: the OFREP evaluate-all rules, which the playground calls as a client would be answered. */
  register(app: H3, answerer: OfrepAnswerer): void;
  /** Stops the feed; resolves once the overrides file writes in flight are on disk. */
  close(): Promise<void>;
}

export async function createAdmin(options: AdminOptions): Promise<Admin> {
  const { store, logger } = options;
  const layer = new OverrideLayer({ logger, file: options.overridesFile });
  await layer.load();
  // Until bound: nothing to re-apply a layer to, no old key to revoke.
  let bound: AdminReload = { apply: async () => undefined, revokeOldKeys: () => 0 };
  const reapply = (env: string) =>
    bound.apply(() => {
      const base = layer.base(env);
      return { environments: new Map(base && store.get(env) ? [[env, base]] : []), problems: new Map() };
    });
  const service = createOverrideService({ store, layer, reapply });
  const { metrics } = options;
  metrics.gauge("flagserve_overrides", "Overrides set, as GET /api/v1/admin/overrides lists them", () =>
    Object.values(layer.list()).reduce((n, flags) => n + Object.keys(flags).length, 0),
  );
  const counted = (action: string) => metrics.count("flagserve_override_changes_total", "Override sets and clears applied", { action });
  const overrides: OverrideService = {
    list: service.list,
    set: (env, key, o) => service.set(env, key, o).then((result) => (counted("set"), result)),
    clear: (env, key) => service.clear(env, key).then((removed) => (removed.length > 0 && counted("clear"), removed)),
  };
  const feed = options.enabled ? new AdminFeed(store) : undefined;

  let token: string | undefined;
  let tokenInState = false;
  if (options.enabled) {
    const resolved = await resolveAdminToken(options.stateDir, options.token);
    if (resolved.persistError)
      logger.warn(
        `the admin token could not be saved in ${options.stateDir} (${resolved.persistError.message}); it will change on restart`,
      );
    token = resolved.token;
    tokenInState = (resolved.source === "state" || resolved.source === "generated") && !resolved.persistError;
  }

  return {
    layer,
    overrides,
    token,
    tokenInState,
    onChanges: (changes) => feed?.onChanges(changes),
    bind(reload) {
      bound = reload;
    },
    register(app, answerer) {
      if (!feed || token === undefined) return;
      const isAllowedHost = allowedHosts(options.listenHost, options.hosts);
      registerAdminGuard(app, { token, isAllowedHost });
      registerPage(app);
      registerAdminRoutes(app, {
        store,
        layer,
        overrides,
        feed,
        faults: options.faults,
        sessions: options.sessions,
        token,
        isAllowedHost,
        maxBodyBytes: options.maxBodyBytes,
        logger,
        answerer,
        revokeOldKeys: (env) => bound.revokeOldKeys(env),
      });
    },
    async close() {
      feed?.close();
      await layer.settled();
    },
  };
}
