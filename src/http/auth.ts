/** Request -> environment: `X-API-Key: <key>` or `Authorization: Bearer <key>`. */
import type { H3Event } from "h3";
import type { FlagStore } from "../store/store.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { apiError } from "./errors.js";

export function presentedKey(event: H3Event): string | undefined {
  const apiKey = event.req.headers.get("x-api-key");
  if (apiKey) return apiKey.trim();
  const authorization = event.req.headers.get("authorization");
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return bearer?.[1];
}

export function authenticate(event: H3Event, store: FlagStore): EnvironmentSnapshot {
  const key = presentedKey(event);
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
