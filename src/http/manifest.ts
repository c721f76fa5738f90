/**
 * The OpenFeature CLI's Manifest Management API (its sync-api.yaml), read-only:
 * `GET /openfeature/v0/manifest` answers the environment's manifest to `openfeature pull`, opened
 * by the environment's key as OFREP is. The API's write routes (`openfeature push`) answer 405:
 * the flag files are the source of truth. Errors take the API's own shape,
 * `{"error":{"message","status"}}`, and are counted and logged as every other error is.
 */
import type { H3, H3Event } from "h3";
import { manifestEnvelope } from "../evaluation/manifest.js";
import { apiError } from "../evaluation/problem.js";
import type { Logger } from "../log/logger.js";
import type { FlagStore } from "../store/store.js";
import { environmentFor } from "./auth.js";
import { json } from "./errors.js";
import { errorResponse } from "./front-door.js";
import type { Metrics } from "./metrics.js";

export const MANIFEST_ROUTE = "/openfeature/v0/manifest";
/** Where `openfeature push` creates (POST), replaces (PUT .../{key}) and archives (DELETE .../{key}) flags. */
const WRITE_ROUTES = [`${MANIFEST_ROUTE}/flags`, `${MANIFEST_ROUTE}/flags/**`];

const READ_ONLY =
  "flagserve's flag files are the source of truth, so this manifest is read-only: change the flag in its file (the server reloads it), then run openfeature pull";

export interface ManifestRouteOptions {
  store: FlagStore;
  metrics: Metrics;
  logger: Logger;
}

export function registerManifestRoutes(app: H3, { store, metrics, logger }: ManifestRouteOptions): void {
  /** `answer`'s result, or the error it throws in the API's shape (with the headers it asks for: WWW-Authenticate, Allow). */
  const inApiShape = (event: H3Event, answer: () => string): string => {
    try {
      return answer();
    } catch (error) {
      const { status, body, headers } = errorResponse(error, { metrics, logger, method: event.req.method, path: event.url.pathname });
      event.res.status = status;
      for (const name in headers) event.res.headers.set(name, headers[name]!);
      return json(event, { error: { message: body.errorDetails, status } });
    }
  };

  const answerManifest = (event: H3Event) =>
    inApiShape(event, () => {
      const snapshot = environmentFor(store, event.req.headers);
      const envelope = manifestEnvelope(snapshot);
      if ("invalid" in envelope) {
        const flags = envelope.invalid.map(({ flag, problem }) => `'${flag}' (${problem})`).join("; ");
        throw apiError(
          409,
          "INVALID_FLAGS",
          `the manifest cannot describe flags that answer PARSE_ERROR: ${flags}; fix them in the flag files`,
        );
      }
      event.res.headers.set("x-manifest-capabilities", "read");
      return json(event, envelope);
    });
  app.get(MANIFEST_ROUTE, answerManifest);
  app.all(MANIFEST_ROUTE, (event) =>
    // HEAD is GET without the body (Node sends none); h3 would map it to GET had no route caught it here.
    event.req.method === "HEAD"
      ? answerManifest(event)
      : inApiShape(event, () => {
          throw apiError(405, "METHOD_NOT_ALLOWED", `${event.req.method} is not allowed here; use GET`, {
            headers: { allow: "GET, HEAD, OPTIONS" },
          });
        }),
  );
  for (const route of WRITE_ROUTES) {
    app.all(route, (event) =>
      inApiShape(event, () => {
        throw apiError(405, "METHOD_NOT_ALLOWED", READ_ONLY, { headers: { allow: "OPTIONS" } });
      }),
    );
  }
}
