/**
 * The admin API's fault rules and recorded sessions, over real HTTP with real OpenFeature
 * clients: a PUT of rules is what the client then gets, a DELETE brings it back; a session read
 * through the API is what the client asked. Same token and guard as every admin route.
 */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSse } from "../helpers/sse.js";
import { until } from "../helpers/wait.js";
import { ADMIN_TOKEN, DEV_KEY, corsHeaders, rawRequest, startAdminFixture, type AdminFixture } from "./helpers.js";

let fixture: AdminFixture;
let domains = 0;

beforeAll(async () => {
  fixture = await startAdminFixture();
});
afterEach(() => {
  fixture.server.setFaults([]);
});
afterAll(async () => {
  await OpenFeature.close();
  await fixture?.close();
});

/** A fresh OpenFeature client on the dev environment, with extra headers. */
function client(headers: [string, string][] = []) {
  const domain = `fixture-routes-${domains++}`;
  OpenFeature.setProvider(domain, new OFREPProvider({ baseUrl: fixture.server.url, headers: [["X-API-Key", DEV_KEY], ...headers] }));
  return OpenFeature.getClient(domain);
}

const json = async (response: Response) => ({ status: response.status, body: await response.json() });

describe("PUT/GET/DELETE /api/v1/admin/faults", () => {
  it("a PUT rule is what a real client then gets; DELETE brings the normal answers back", async () => {
    const c = client();
    expect(await c.getStringDetails("banner", "x", { targetingKey: "u" })).toMatchObject({ value: "blue", reason: "STATIC" });

    const rules = [{ route: "evaluate", environment: "dev", ratio: 1, status: 500 }];
    expect(await json(await fixture.admin("/faults", { method: "PUT", body: rules }))).toEqual({ status: 200, body: { rules } });
    expect(await json(await fixture.admin("/faults"))).toEqual({ status: 200, body: { rules } });
    expect(fixture.server.faults()).toEqual(rules);
    expect(await c.getStringDetails("banner", "x", { targetingKey: "u" })).toMatchObject({
      value: "x",
      reason: "ERROR",
      errorMessage: "injected fault: 500 on evaluate",
    });
    // Another environment is untouched by a rule naming dev.
    const prod = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, {
      method: "POST",
      headers: { "x-api-key": fixture.server.keys.prod! },
    });
    expect(prod.status).toBe(200);

    expect(await json(await fixture.admin("/faults", { method: "DELETE" }))).toEqual({ status: 200, body: { rules: [] } });
    expect(await json(await fixture.admin("/faults"))).toEqual({ status: 200, body: { rules: [] } });
    expect(await c.getStringDetails("banner", "x", { targetingKey: "u" })).toMatchObject({ value: "blue", reason: "STATIC" });
  });

  it("summed latencies are capped (never past setTimeout's limit), and a DELETE releases the requests waiting", async () => {
    const injected = async () => {
      const text = await (await fetch(`${fixture.server.url}/metrics`)).text();
      return Number(/flagserve_faults_injected_total\{route="evaluate",effect="latency"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await injected();
    // 4 000 rules of 10 minutes: 2.4e9 ms together, past 2^31-1 ms, where Node would wait 1 ms instead.
    const rules = Array.from({ length: 4000 }, () => ({ route: "evaluate", ratio: 1, latencyMs: 600_000 }));
    expect((await fixture.admin("/faults", { method: "PUT", body: rules })).status).toBe(200);
    let settled = false;
    const waiting = fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, {
      method: "POST",
      headers: { "x-api-key": DEV_KEY },
    }).then((r) => {
      settled = true;
      return r;
    });
    await until("the request is delayed", async () => (await injected()) > before);
    // Other requests are answered meanwhile; the delayed one is still waiting.
    expect((await fetch(`${fixture.server.url}/healthz`)).status).toBe(200);
    expect((await fixture.admin("/faults")).status).toBe(200);
    expect(settled).toBe(false);

    expect((await fixture.admin("/faults", { method: "DELETE" })).status).toBe(200);
    const released = await waiting;
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({ value: "blue" });
  });

  it("a PUT replaces the rules: a 429 with Retry-After after a latency rule", async () => {
    await fixture.admin("/faults", { method: "PUT", body: [{ route: "evaluate-all", ratio: 1, latencyMs: 1 }] });
    const replaced = [{ route: "evaluate-all", ratio: 1, status: 429, retryAfter: 7 }];
    expect((await json(await fixture.admin("/faults", { method: "PUT", body: replaced }))).body).toEqual({ rules: replaced });
    const bulk = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": DEV_KEY } });
    expect(bulk.status).toBe(429);
    expect(bulk.headers.get("retry-after")).toBe("7");
    expect(await bulk.json()).toEqual({ errorCode: "RATE_LIMITED", errorDetails: "injected fault: 429 on evaluate-all" });
  });

  it("invalid rules or JSON: 400 naming each problem, and the active rules stay as they were", async () => {
    const active = [{ route: "evaluate", ratio: 0.5, latencyMs: 5 }];
    await fixture.admin("/faults", { method: "PUT", body: active });

    const bad = await json(
      await fixture.admin("/faults", {
        method: "PUT",
        body: [
          { route: "evaluate", ratio: 1, status: 500 },
          { route: "evaluate", ratio: 2, status: 500 },
          { route: "nowhere", ratio: 1, drop: true },
        ],
      }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.errorCode).toBe("INVALID_REQUEST");
    expect(bad.body.problems).toEqual([
      "rule 2: ratio must be <= 1",
      expect.stringMatching(
        /^rule 3: route must be one of "evaluate", "evaluate-all", "events", "ofrep-events", "flagd-evaluate", "flagd-events", "flagd-sync"$/,
      ),
    ]);
    expect(bad.body.errorDetails).toContain("rule 2: ratio must be <= 1");

    const effect = await json(
      await fixture.admin("/faults", { method: "PUT", body: [{ route: "evaluate", ratio: 1, status: 500, latencyMs: 3 }] }),
    );
    expect(effect).toMatchObject({
      status: 400,
      body: { problems: ["rule 1: needs exactly one effect, 'status', 'latencyMs' or 'drop' (found status, latencyMs)"] },
    });

    const malformed = await json(await fixture.admin("/faults", { method: "PUT", body: "[{" }));
    expect(malformed).toMatchObject({ status: 400, body: { errorCode: "INVALID_REQUEST" } });

    expect(await json(await fixture.admin("/faults"))).toEqual({ status: 200, body: { rules: active } });
  });

  it("never touch the admin routes, even with every route failing", async () => {
    const all = ["evaluate", "evaluate-all", "events", "ofrep-events"].map((route) => ({ route, ratio: 1, status: 503 }));
    expect((await fixture.admin("/faults", { method: "PUT", body: all })).status).toBe(200);
    expect(
      (await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": DEV_KEY } })).status,
    ).toBe(503);
    for (const path of ["/environments", "/overrides", "/faults", "/sessions"]) expect((await fixture.admin(path)).status, path).toBe(200);
    const played = await fixture.admin("/environments/dev/evaluate", { method: "POST", body: {} });
    // The playground evaluates through the OFREP route in-process: the rules leave it alone too.
    expect(played.status).toBe(200);
    expect((await played.json()).flags.map((f: { key: string }) => f.key)).toEqual(["banner", "new-checkout"]);
    const feed = await openSse(`${fixture.server.url}/api/v1/admin/events`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    try {
      expect(feed.response.status).toBe(200);
      await feed.next((b) => b.event === "status");
    } finally {
      feed.close();
    }
    expect((await fixture.admin("/faults", { method: "DELETE" })).status).toBe(200);
  });

  it("need the admin token, answer 405 to other methods, and carry no CORS", async () => {
    for (const method of ["GET", "PUT", "DELETE"]) {
      const response = await fetch(`${fixture.server.url}/api/v1/admin/faults`, { method, body: method === "PUT" ? "[]" : undefined });
      expect(response.status, method).toBe(401);
    }
    const post = await fixture.admin("/faults", { method: "POST", body: [] });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, PUT, DELETE");
    const foreign = await rawRequest(`${fixture.server.url}/api/v1/admin/faults`, {
      method: "PUT",
      headers: { origin: "https://evil.example", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify([{ route: "evaluate", ratio: 1, status: 500 }]),
    });
    expect(foreign.status).toBe(403);
    expect(corsHeaders(foreign.headers)).toEqual([]);
    expect(fixture.server.faults()).toEqual([]);
  });
});

describe("GET/DELETE /api/v1/admin/sessions", () => {
  const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  it("a session read over HTTP is what a real client asked, in order; ids with / and % round-trip", async () => {
    const id = "ci/shard-1%done";
    const c = client([["X-Flagserve-Session", id]]);
    await c.getStringValue("banner", "x", { targetingKey: "u1" });
    await c.getBooleanValue("new-checkout", false, { targetingKey: "u2", email: "ann@example.com" });
    await c.getBooleanValue("missing", false, { targetingKey: "u3" });

    // Over HTTP each request's context is sent once, in `contexts`, named by the entries' contextId.
    const expected = {
      dropped: 0,
      evaluations: [
        { flagKey: "banner", variant: "blue", value: "blue", reason: "STATIC", contextId: "1", at },
        { flagKey: "new-checkout", variant: "on", value: true, reason: "TARGETING_MATCH", contextId: "2", at },
        { flagKey: "missing", reason: "ERROR", errorCode: "FLAG_NOT_FOUND", contextId: "3", at },
      ],
      contexts: { "1": { targetingKey: "u1" }, "2": { targetingKey: "u2", email: "ann@example.com" }, "3": { targetingKey: "u3" } },
    };
    const encoded = await json(await fixture.admin(`/sessions/${encodeURIComponent(id)}`));
    expect(encoded).toEqual({ status: 200, body: expected });
    // The same as the programmatic API's, which puts each context in its entries.
    const inProcess = fixture.server.session(id);
    expect(inProcess.evaluations.map((e) => e.context)).toEqual(
      encoded.body.evaluations.map((e: { contextId: string }) => encoded.body.contexts[e.contextId]),
    );
    // Written without encoding the slash, as a shell user might: the rest of the path is the id.
    expect((await json(await fixture.admin("/sessions/ci/shard-1%25done"))).body).toEqual(expected);

    const list = await json(await fixture.admin("/sessions"));
    expect(list.status).toBe(200);
    expect(list.body.sessions).toContainEqual({ id, evaluations: 3, dropped: 0, bytes: expect.any(Number), lastActivity: at });

    expect(await json(await fixture.admin(`/sessions/${encodeURIComponent(id)}`, { method: "DELETE" }))).toEqual({
      status: 200,
      body: { id, removed: true },
    });
    expect(await json(await fixture.admin(`/sessions/${encodeURIComponent(id)}`, { method: "DELETE" }))).toEqual({
      status: 200,
      body: { id, removed: false },
    });
    expect((await json(await fixture.admin(`/sessions/${encodeURIComponent(id)}`))).body).toEqual({
      evaluations: [],
      contexts: {},
      dropped: 0,
    });
    expect((await json(await fixture.admin("/sessions"))).body.sessions.map((s: { id: string }) => s.id)).not.toContain(id);
  });

  it("an unknown session is an empty one; an id no request could carry is 400 INVALID_SESSION", async () => {
    expect(await json(await fixture.admin("/sessions/never-used"))).toEqual({
      status: 200,
      body: { evaluations: [], contexts: {}, dropped: 0 },
    });
    for (const path of [`/sessions/${"x".repeat(129)}`, "/sessions/two%20words", "/events?session=two%20words"]) {
      const response = await json(await fixture.admin(path));
      expect(response.status, path).toBe(400);
      expect(response.body.errorCode, path).toBe("INVALID_SESSION");
    }
  });

  it("need the admin token and answer 405 to other methods", async () => {
    for (const [method, path] of [
      ["GET", "/sessions"],
      ["GET", "/sessions/a"],
      ["DELETE", "/sessions/a"],
    ] as const) {
      expect((await fetch(`${fixture.server.url}/api/v1/admin${path}`, { method })).status, `${method} ${path}`).toBe(401);
    }
    const put = await fixture.admin("/sessions/a", { method: "PUT", body: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, DELETE");
    expect((await fixture.admin("/sessions", { method: "DELETE" })).headers.get("allow")).toBe("GET");
  });

  it("the admin stream with ?session=ID: what the session holds, then each evaluation as it is recorded", async () => {
    const id = "live/1";
    await client([["X-Flagserve-Session", id]]).getStringValue("banner", "x", { targetingKey: "before" });
    const feed = await openSse(`${fixture.server.url}/api/v1/admin/events?session=${encodeURIComponent(id)}`, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
    });
    try {
      const first = await feed.next((b) => b.event === "session");
      expect(JSON.parse(first.data!)).toEqual({
        id,
        skipped: 0,
        evaluations: [expect.objectContaining({ flagKey: "banner", contextId: "1" })],
        contexts: { "1": { targetingKey: "before" } },
      });

      const from = feed.blocks.length;
      const bulk = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, {
        method: "POST",
        headers: { "x-api-key": DEV_KEY, "x-flagserve-session": id },
        body: JSON.stringify({ context: { targetingKey: "after" } }),
      });
      expect(bulk.status).toBe(200);
      const live = await feed.next((b) => b.event === "evaluations", 5_000, from);
      // One event for the whole evaluate-all, in the answer's order, its context written once.
      expect(JSON.parse(live.data!)).toEqual({
        id,
        skipped: 0,
        evaluations: [
          expect.objectContaining({ flagKey: "banner", contextId: "1" }),
          expect.objectContaining({ flagKey: "new-checkout", contextId: "1" }),
        ],
        contexts: { "1": { targetingKey: "after" } },
      });

      // Another session's evaluations do not reach this stream; a flag change still does.
      const mark = feed.blocks.length;
      await client([["X-Flagserve-Session", "someone-else"]]).getStringValue("banner", "x", { targetingKey: "other" });
      await fixture.server.overrides.set("dev", "banner", { variant: "green" });
      await feed.next((b) => b.event === "change", 5_000, mark);
      expect(
        feed
          .events()
          .slice(mark)
          .filter((b) => b.event === "evaluations"),
      ).toEqual([]);
      await fixture.server.overrides.clear("dev", "banner");

      // Deleted: the stream says the session starts over, empty.
      const beforeDelete = feed.blocks.length;
      expect((await fixture.admin(`/sessions/${encodeURIComponent(id)}`, { method: "DELETE" })).status).toBe(200);
      const restarted = await feed.next((b) => b.event === "session", 5_000, beforeDelete);
      expect(JSON.parse(restarted.data!)).toEqual({ id, evaluations: [], contexts: {}, skipped: 0 });
    } finally {
      feed.close();
    }
  });
});
