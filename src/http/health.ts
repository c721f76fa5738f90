/**
 * Probes and metrics: no key needed. Asked with a Host this server does not answer to (a
 * DNS-rebinding page), they say how it is without naming what it serves: no file paths in
 * /readyz, no flag keys, variants or environments in /metrics.
 */
import type { H3, H3Event } from "h3";
import { allowedHosts, hostName } from "./hosts.js";
import { formatProblem } from "../model/types.js";
import type { FlagStore } from "../store/store.js";
import { json } from "./errors.js";
import type { Metrics } from "./metrics.js";

export function registerHealthRoutes(
  app: H3,
  store: FlagStore,
  metrics: Metrics,
  isKnownHost: (name: string) => boolean = allowedHosts("127.0.0.1"),
): void {
  const known = (event: H3Event) => isKnownHost(hostName(event.req.headers.get("host") ?? ""));
  app.get("/healthz", (event) => json(event, { status: "ok" }));

  // Ready once at least one environment is served; problems (an invalid edit keeps the last
  // good configuration) are listed so a broken file is visible without reading logs.
  app.get("/readyz", (event) => {
    const problems = [...store.problems.values()].flat().map(formatProblem);
    const environments = store.environments.size;
    const status = environments === 0 ? "unavailable" : problems.length > 0 ? "degraded" : "ready";
    if (environments === 0) event.res.status = 503;
    // A URL source answered from elsewhere says so: source URL -> the URL finally read (URLs: not for a foreign Host).
    const redirects = Object.assign({}, ...[...store.environments.values()].map((s) => s.config.redirects ?? {})) as Record<string, string>;
    const details = { status, environments, problems, ...(Object.keys(redirects).length > 0 && { redirects }) };
    return json(event, known(event) ? details : { status, environments });
  });

  app.get(
    "/metrics",
    (event) => new Response(metrics.render({ details: known(event) }), { headers: { "content-type": "text/plain; version=0.0.4" } }),
  );
}
