/**
 * The test-fixture part of the admin API: fault rules (`faults`) and recorded evaluation
 * sessions (`sessions`, `sessions/{id}`). Same guard as every admin route; the fault rules
 * themselves never apply here (only the OFREP and event routes consult them).
 */
import type { H3, H3Event } from "h3";
import { FaultRulesError } from "../fixture/fault-rules.js";
import type { FaultInjector } from "../fixture/faults.js";
import { isSessionId, shareContexts, type SessionStore } from "../fixture/sessions.js";
import { decodedPathTail } from "../http/path.js";
import { AdminError } from "./errors.js";
import { ADMIN_API_PREFIX } from "./paths.js";
import { body, handle } from "./handler.js";

export const FAULTS_PATH = `${ADMIN_API_PREFIX}/faults`;
export const SESSIONS_PATH = `${ADMIN_API_PREFIX}/sessions`;
/** `sessions/{id}`: the rest of the path is the id (`/` in it sent as `%2F`, or as is). */
export const SESSION_PATH = `${SESSIONS_PATH}/**:id`;

export interface FixtureRoutesOptions {
  faults: FaultInjector;
  sessions: SessionStore;
  maxBodyBytes: number;
}

export function registerFaultRoutes(app: H3, { faults, maxBodyBytes }: FixtureRoutesOptions): void {
  app.get(
    FAULTS_PATH,
    handle(() => ({ rules: faults.rules() })),
  );
  app.put(
    FAULTS_PATH,
    handle(async (event) => {
      const input = await body(event, maxBodyBytes);
      try {
        return { rules: faults.set(input ?? []) };
      } catch (error) {
        if (!(error instanceof FaultRulesError)) throw error;
        throw new AdminError(400, "INVALID_REQUEST", error.message, { problems: error.problems });
      }
    }),
  );
  app.delete(
    FAULTS_PATH,
    handle(() => {
      faults.clear();
      return { rules: [] };
    }),
  );
}

/** A session id as given, or 400 INVALID_SESSION when no request could carry it in its header. */
export function checkedSessionId(id: string): string {
  if (!isSessionId(id))
    throw new AdminError(400, "INVALID_SESSION", `a session id is 1 to 128 visible ASCII characters without spaces, not '${id}'`);
  return id;
}

/** The id in `sessions/{id}`, decoded as OFREP decodes a flag key. */
const sessionIdOf = (event: H3Event): string => checkedSessionId(decodedPathTail(event, `${SESSIONS_PATH}/`, "id"));

export function registerSessionRoutes(app: H3, { sessions }: FixtureRoutesOptions): void {
  app.get(
    SESSIONS_PATH,
    handle(() => ({ sessions: sessions.list() })),
  );
  // An unknown session is an empty one; an evicted one is 410 Gone, so that a test asserting
  // "nothing was asked" cannot pass on a session whose entries were thrown away.
  app.get(
    SESSION_PATH,
    handle((event) => {
      const id = sessionIdOf(event);
      const { evaluations, dropped, evicted } = sessions.get(id);
      if (evicted !== undefined)
        throw new AdminError(410, "SESSION_EVICTED", `session ${id} was evicted (${evicted}); its evaluations are gone`, { id });
      return { ...shareContexts(evaluations), dropped };
    }),
  );
  app.delete(
    SESSION_PATH,
    handle((event) => {
      const id = sessionIdOf(event);
      return { id, removed: sessions.delete(id) };
    }),
  );
}
