/**
 * The admin API's fault rules and recorded sessions, over real HTTP with real OpenFeature
 * clients: a PUT of rules is what the client then gets, a DELETE brings it back; a session read
 * through the API is what the client asked. Same token and guard as every admin route.
 */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSse } from "../helpers/sse.js";
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
    const prod = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": fixture.server.keys.prod! } });
    expect(prod.status).toBe(200);

    expect(await json(await fixture.admin("/faults", { method: "DELETE" }))).toEqual({ status: 200, body: { rules: [] } });
    expect(await json(await fixture.admin("/faults"))).toEqual({ status: 200, body: { rules: [] } });
    expect(await c.getStringDetails("banner", "x", { targetingKey: "u" })).toMatchObject({ value: "blue", reason: "STATIC" });
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
        body: [{ route: "evaluate", ratio: 1, status: 500 }, { route: "evaluate", ratio: 2, status: 500 }, { route: "nowhere", ratio: 1, drop: true }],
      }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.errorCode).toBe("INVALID_REQUEST");
    expect(bad.body.problems).toEqual(["rule 2: ratio must be <= 1", expect.stringMatching(/^rule 3: route must be one of "evaluate", "evaluate-all", "events", "ofrep-events"$/)]);
    expect(bad.body.errorDetails).toContain("rule 2: ratio must be <= 1");

    const effect = await json(await fixture.admin("/faults", { method: "PUT", body: [{ route: "evaluate", ratio: 1, status: 500, latencyMs: 3 }] }));
    expect(effect).toMatchObject({ status: 400, body: { problems: ["rule 1: needs exactly one effect, 'status', 'latencyMs' or 'drop' (found status, latencyMs)"] } });

    const malformed = await json(await fixture.admin("/faults", { method: "PUT", body: "[{" }));
    expect(malformed).toMatchObject({ status: 400, body: { errorCode: "INVALID_REQUEST" } });

    expect(await json(await fixture.admin("/faults"))).toEqual({ status: 200, body: { rules: active } });
  });

  it("never touch the admin routes, even with every route failing", async () => {
    const all = ["evaluate", "evaluate-all", "events", "ofrep-events"].map((route) => ({ route, ratio: 1, status: 503 }));
    expect((await fixture.admin("/faults", { method: "PUT", body: all })).status).toBe(200);
    expect((await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": DEV_KEY } })).status).toBe(503);
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
