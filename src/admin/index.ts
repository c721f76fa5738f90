/**
 * Admin: the overrides layer, the admin token, and (unless turned off) the admin API and the
 * dashboard page. The server wires it in: `layer` goes into every load, `onChanges` feeds the
 * page's stream, `register` adds the routes, `bind` gives the layer a way to re-apply.
 */
import type { H3 } from "h3";
import type { EnvironmentChange } from "../changes/reload.js";
import type { ConfigLoad } from "../config/index.js";
import type { Logger } from "../log.js";
import type { FlagStore } from "../store/store.js";
import { AdminFeed } from "./feed.js";
import { allowedHosts, isAdminPath } from "./guard.js";
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
}

export interface Admin {
  layer: OverrideLayer["apply"];
  overrides: OverrideService;
  /** Undefined with the admin API off. */
  token?: string;
  isAdminPath(path: string): boolean;
  onChanges(changes: readonly EnvironmentChange[]): void;
  /**
   * How an override change re-applies an environment: the same path a reload takes, given a
   * load of the environment's last file definition (built once earlier applies are done).
   */
  bind(apply: (load: () => ConfigLoad) => Promise<unknown>): void;
  register(app: H3): void;
  close(): void;
}

export async function createAdmin(options: AdminOptions): Promise<Admin> {
  const { store, logger } = options;
  const layer = new OverrideLayer({ logger, file: options.overridesFile });
  await layer.load();
  let reapply: (env: string) => Promise<unknown> = async () => undefined;
  const overrides = createOverrideService({ store, layer, reapply: (env) => reapply(env) });
  const feed = options.enabled ? new AdminFeed(store) : undefined;

  let token: string | undefined;
  if (options.enabled) {
    const resolved = await resolveAdminToken(options.stateDir, options.token);
    if (resolved.persistError) logger.warn(`the admin token could not be saved in ${options.stateDir} (${resolved.persistError.message}); it will change on restart`);
    token = resolved.token;
  }

  return {
    layer: layer.apply,
    overrides,
    token,
    isAdminPath,
    onChanges: (changes) => feed?.onChanges(changes),
    bind(apply) {
      reapply = (env) =>
        apply(() => {
          const base = layer.base(env);
          return { environments: new Map(base && store.get(env) ? [[env, base]] : []), problems: new Map() };
        });
    },
    register(app) {
      if (!feed || token === undefined) return;
      registerAdminGuard(app, { token, isAllowedHost: allowedHosts(options.listenHost, options.hosts) });
      registerPage(app);
      registerAdminRoutes(app, {
        store,
        layer,
        overrides,
        feed,
        token,
        isAllowedHost: allowedHosts(options.listenHost, options.hosts),
        maxBodyBytes: options.maxBodyBytes,
        logger,
      });
    },
    close: () => feed?.close(),
  };
}
