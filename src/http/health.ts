/** Probes and metrics: no key needed, no flag data revealed. */
import type { H3 } from "h3";
import { formatProblem } from "../model/types.js";
import type { FlagStore } from "../store/store.js";
import { json } from "./errors.js";
import type { Metrics } from "./metrics.js";

export function registerHealthRoutes(app: H3, store: FlagStore, metrics: Metrics): void {
  app.get("/healthz", (event) => json(event, { status: "ok" }));

  // Ready once at least one environment is served; problems (an invalid edit keeps the last
  // good configuration) are listed so a broken file is visible without reading logs.
  app.get("/readyz", (event) => {
    const problems = [...store.problems.values()].flat().map(formatProblem);
    const environments = store.environments.size;
    const status = environments === 0 ? "unavailable" : problems.length > 0 ? "degraded" : "ready";
    if (environments === 0) event.res.status = 503;
    // A URL source answered from elsewhere says so: source URL -> the URL finally read.
    const redirects = Object.assign({}, ...[...store.environments.values()].map((s) => s.config.redirects ?? {})) as Record<string, string>;
    return json(event, { status, environments, problems, ...(Object.keys(redirects).length > 0 && { redirects }) });
  });

  app.get("/metrics", () => new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } }));
}
