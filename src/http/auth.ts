/** Request -> environment: `X-API-Key: <key>` or `Authorization: Bearer <key>`. */
import type { H3Event } from "h3";
import type { FlagStore } from "../store/store.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import type { RequestHeaders } from "../evaluation/context.js";
import { apiError } from "../evaluation/problem.js";
import { toHttpError } from "./errors.js";

export function keyFromHeaders(headers: RequestHeaders): string | undefined {
  const apiKey = headers.get("x-api-key");
  if (apiKey) return apiKey.trim();
  const authorization = headers.get("authorization");
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return bearer?.[1];
}

/** The environment the request's key selects, else 401 (the rule both the h3 routes and the fast path apply). */
export const environmentFor = (store: FlagStore, headers: RequestHeaders): EnvironmentSnapshot =>
  environmentForKey(store, keyFromHeaders(headers));

/** `environmentFor` once the key is read (`keyFromHeaders`), for callers that keep the key too. */
export function environmentForKey(store: FlagStore, key: string | undefined): EnvironmentSnapshot {
  if (key === undefined) {
    throw apiError(401, "UNAUTHORIZED", "missing API key: send X-API-Key or Authorization: Bearer", {
      headers: { "www-authenticate": 'Bearer realm="flagserve"' },
    });
  }
  const snapshot = store.authenticate(key);
  if (!snapshot) {
    throw apiError(401, "UNAUTHORIZED", "unknown API key", { headers: { "www-authenticate": 'Bearer realm="flagserve"' } });
  }
  return snapshot;
}

/** `environmentFor` in an h3 handler. */
export function authenticate(event: H3Event, store: FlagStore): EnvironmentSnapshot {
  try {
    return environmentFor(store, event.req.headers);
  } catch (error) {
    throw toHttpError(error);
  }
}
