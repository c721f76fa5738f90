/**
 * The rules every admin request passes before a handler runs: a Host this server answers to
 * (DNS rebinding), no cross-origin use (no CORS, preflights refused, a foreign Origin refused),
 * and for the API the admin token as `Authorization: Bearer TOKEN`.
 */
import type { H3Event } from "h3";
import { hostName } from "../http/hosts.js";
import { AdminError } from "./errors.js";
import { ADMIN_API_PREFIX } from "./paths.js";
import { tokenMatches } from "./token.js";

export const PAGE_ASSETS_PREFIX = "/ui/";

/** The dashboard page, its assets and the admin API. */
export const isAdminPath = (path: string): boolean =>
  path === "/" || path.startsWith(PAGE_ASSETS_PREFIX) || path === ADMIN_API_PREFIX || path.startsWith(`${ADMIN_API_PREFIX}/`);

export function checkHostAndOrigin(event: H3Event, isAllowedHost: (name: string) => boolean): void {
  const host = event.req.headers.get("host") ?? "";
  if (!isAllowedHost(hostName(host))) {
    throw new AdminError(
      421,
      "MISDIRECTED_REQUEST",
      `the admin API and dashboard answer only to localhost, the listen address and --admin-host names, not '${host}'`,
    );
  }
  if (event.req.method === "OPTIONS") {
    throw new AdminError(403, "FORBIDDEN", "cross-origin requests to the admin API are refused (no CORS)");
  }
  const origin = event.req.headers.get("origin");
  if (origin !== null && !sameOrigin(origin, host)) {
    throw new AdminError(403, "FORBIDDEN", `requests from another origin (${origin}) are refused`);
  }
}

function sameOrigin(origin: string, host: string): boolean {
  try {
    return new URL(origin).host === host.trim().toLowerCase();
  } catch {
    return false; // "null" (sandboxed frames, file:) and garbage
  }
}

export function checkToken(event: H3Event, token: string): void {
  const header = event.req.headers.get("authorization");
  const presented = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  const challenge = { "www-authenticate": 'Bearer realm="flagserve-admin"' };
  if (presented === undefined)
    throw new AdminError(401, "UNAUTHORIZED", "missing admin token: send Authorization: Bearer TOKEN", {}, challenge);
  if (!tokenMatches(presented, token)) throw new AdminError(401, "UNAUTHORIZED", "wrong admin token", {}, challenge);
}
