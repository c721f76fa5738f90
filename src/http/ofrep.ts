/** OFREP evaluation routes (see docs/api.md) under h3: request -> auth -> snapshot -> evaluate -> response. */
import { noContent, type H3, type H3Event } from "h3";
import type { FaultInjector } from "../fixture/faults.js";
import type { FlagStore } from "../store/store.js";
import { authenticate } from "./auth.js";
import { readBodyText } from "./body.js";
import { httpError, withHttpErrors } from "./errors.js";
import { ALL_ROUTE, FLAG_PATH_PREFIX, FLAG_ROUTE } from "./front-door.js";
import { replyText, type OfrepAnswerer, type OfrepReply } from "../answers/ofrep-answers.js";
import { decodedPathTail } from "./path.js";

export interface OfrepOptions {
  store: FlagStore;
  /** What the routes answer once the request is read (shared with the Node fast path). */
  answerer: OfrepAnswerer;
  maxBodyBytes: number;
  /** Test-fixture hook (src/fixture/); absent costs nothing. */
  faults?: FaultInjector;
}

/** The flag key as the client wrote it (`encodeURIComponent(key)`, `/` in a key included). */
const flagKeyOf = (event: H3Event): string => decodedPathTail(event, FLAG_PATH_PREFIX, "key");

/**
 * A reply through h3. Text, not a Response (which h3 would wrap in a stream) nor bytes (for which
 * h3 builds and merges a header set of its own): the text goes out as is, with its Content-Length.
 */
function send(event: H3Event, reply: OfrepReply) {
  for (const name in reply.headers) event.res.headers.set(name, reply.headers[name]!);
  if (reply.status === 304) return noContent(304);
  if (reply.status !== 200) event.res.status = reply.status;
  return replyText(reply);
}

export function registerOfrepRoutes(app: H3, options: OfrepOptions): void {
  const { store, answerer, maxBodyBytes, faults } = options;

  app.post(ALL_ROUTE, async (event) => {
    const snapshot = authenticate(event, store);
    // The router folds a trailing slash into this route; `flags/` is the single-flag route with an empty key.
    if (event.url.pathname.endsWith("/")) throw httpError(404, "FLAG_NOT_FOUND", "the flag key is empty", { key: "" });
    const fault = faults?.apply(event, "evaluate-all", snapshot.name);
    if (fault) await fault;
    const text = await readBodyText(event, maxBodyBytes);
    return send(
      event,
      await withHttpErrors(() => answerer.all(snapshot, text, event.req.headers, event.url.searchParams.get("flagConfigEtag"))),
    );
  });

  app.post(FLAG_ROUTE, async (event) => {
    const key = flagKeyOf(event);
    const snapshot = authenticate(event, store);
    const fault = faults?.apply(event, "evaluate", snapshot.name, key);
    if (fault) await fault;
    const text = await readBodyText(event, maxBodyBytes);
    return send(event, await withHttpErrors(() => answerer.flag(snapshot, key, text, event.req.headers)));
  });

  for (const route of [ALL_ROUTE, FLAG_ROUTE]) {
    app.all(route, (event) => {
      throw httpError(405, "METHOD_NOT_ALLOWED", `${event.req.method} is not allowed here; use POST`, {
        headers: { allow: "POST, OPTIONS" },
      });
    });
  }
}
