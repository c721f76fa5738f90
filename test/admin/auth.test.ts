/** Who may use the admin API and the page: token, Host, origin, --no-admin. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, DEV_KEY, corsHeaders, rawRequest, startAdminFixture, type AdminFixture } from "./helpers.js";

let fixture: AdminFixture;
let port: string;

beforeAll(async () => {
  fixture = await startAdminFixture();
  port = new URL(fixture.server.url).port;
});
afterAll(() => fixture?.close());

const environments = "/api/v1/admin/environments";

describe("the admin token", () => {
  it("401 JSON without a token, with a wrong one, or as X-API-Key; 200 with the right one", async () => {
    const url = `${fixture.server.url}${environments}`;
    for (const headers of [
      {},
      { authorization: "Bearer wrong-token" },
      { authorization: `Basic ${ADMIN_TOKEN}` },
      { "x-api-key": ADMIN_TOKEN },
      { authorization: `Bearer ${DEV_KEY}` },
    ]) {
      const response = await fetch(url, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
      const body = await response.json();
      expect(body.errorCode).toBe("UNAUTHORIZED");
      expect(body.errorDetails).toMatch(/admin token/);
    }
    const ok = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).environments.map((e: { name: string }) => e.name)).toEqual(["dev", "prod"]);
  });

  it("every admin route needs it, the page's stream and playground included", async () => {
    const routes: [string, string][] = [
      ["GET", "/api/v1/admin/overrides"],
      ["GET", "/api/v1/admin/events"],
      ["PUT", "/api/v1/admin/environments/dev/overrides/banner"],
      ["DELETE", "/api/v1/admin/environments/dev/overrides/banner"],
      ["DELETE", "/api/v1/admin/environments/dev/overrides"],
      ["PATCH", "/api/v1/admin/environments/dev/flags/banner"],
      ["POST", "/api/v1/admin/environments/dev/evaluate"],
      ["GET", "/api/v1/admin/no-such-route"],
    ];
    for (const [method, path] of routes) {
      const response = await fetch(`${fixture.server.url}${path}`, { method, body: method === "GET" ? undefined : '{"variant":"green"}' });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
    // Nothing changed: the PUT above did not go through.
    expect((await (await fixture.admin("/overrides")).json()).overrides).toEqual({});
  });

  it("an API key does not open the admin API, and the admin token does not open OFREP", async () => {
    const ofrep = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(ofrep.status).toBe(401);
    const withKey = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": DEV_KEY } });
    expect(withKey.status).toBe(200);
  });
});

describe("Host and origin (DNS rebinding, other web pages)", () => {
  it("answers to loopback names and the listen address, 421 JSON to any other Host", async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `app.localhost:${port}`]) {
      const response = await rawRequest(`${fixture.server.url}${environments}`, {
        headers: { host, authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.status, host).toBe(200);
    }
    for (const host of [`evil.example:${port}`, "attacker.test", `10.0.0.1:${port}`]) {
      const response = await rawRequest(`${fixture.server.url}${environments}`, {
        headers: { host, authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.status, host).toBe(421);
      expect(JSON.parse(response.body)).toMatchObject({ errorCode: "MISDIRECTED_REQUEST" });
      const page = await rawRequest(`${fixture.server.url}/`, { headers: { host } });
      expect(page.status).toBe(421);
      expect(page.body).not.toContain("<html");
    }
  });

  it("answers to a loopback address in any spelling, as hosts.ts's isLoopbackAddress tells it, and to no look-alike", async () => {
    // A browser writes http://[::ffff:127.0.0.1]:PORT as [::ffff:7f00:1]; curl sends what it is given.
    for (const host of [`[::ffff:7f00:1]:${port}`, `[::ffff:127.0.0.1]:${port}`, `[0:0:0:0:0:0:0:1]:${port}`, `127.0.0.2:${port}`]) {
      const response = await rawRequest(`${fixture.server.url}${environments}`, {
        headers: { host, authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.status, host).toBe(200);
    }
    // 10.0.0.1 mapped into IPv6; a name shaped like a 127 address that is no address.
    for (const host of [`[::ffff:a00:1]:${port}`, `[::ffff:10.0.0.1]:${port}`, `127.999.0.1:${port}`]) {
      const response = await rawRequest(`${fixture.server.url}${environments}`, {
        headers: { host, authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.status, host).toBe(421);
    }
  });

  it("refuses cross-origin preflights with 403 and no CORS headers", async () => {
    const response = await rawRequest(`${fixture.server.url}/api/v1/admin/environments/dev/overrides/banner`, {
      method: "OPTIONS",
      headers: {
        origin: "https://evil.example",
        "access-control-request-method": "PUT",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toMatchObject({ errorCode: "FORBIDDEN" });
    expect(corsHeaders(response.headers)).toEqual([]);
  });

  it("refuses a request carrying another origin, even with the token; admin responses carry no CORS headers", async () => {
    const refused = await rawRequest(`${fixture.server.url}/api/v1/admin/environments/dev/overrides/banner`, {
      method: "PUT",
      headers: { origin: "https://evil.example", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: '{"variant":"green"}',
    });
    expect(refused.status).toBe(403);
    expect(corsHeaders(refused.headers)).toEqual([]);
    expect((await (await fixture.admin("/overrides")).json()).overrides).toEqual({});

    const sameOrigin = await rawRequest(`${fixture.server.url}${environments}`, {
      headers: { origin: `http://localhost:${port}`, host: `localhost:${port}`, authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(sameOrigin.status).toBe(200);
    expect(corsHeaders(sameOrigin.headers)).toEqual([]);
  });

  it("serves the page without a token (it holds no data), with a strict CSP and no CORS", async () => {
    const response = await rawRequest(`${fixture.server.url}/`, {
      headers: { origin: `http://localhost:${port}`, host: `localhost:${port}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/html/);
    expect(response.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(response.headers["referrer-policy"]).toBe("no-referrer");
    expect(corsHeaders(response.headers)).toEqual([]);
    expect(response.body).not.toContain(ADMIN_TOKEN);
  });

  it("the page is small and self-contained: its three files under 100 kB, nothing loaded from elsewhere", async () => {
    let total = 0;
    for (const path of ["/", "/ui/app.js", "/ui/app.css"]) {
      const response = await fetch(`${fixture.server.url}${path}`);
      expect(response.status, path).toBe(200);
      const text = await response.text();
      total += Buffer.byteLength(text);
      expect(text, path).not.toMatch(/(src|href|url)\s*[=(]\s*["']?(https?:)?\/\//i);
      expect(text, path).not.toMatch(/@import|fonts\.googleapis|cdn\./i);
    }
    expect(total).toBeLessThan(100_000);
  });

  it("OFREP keeps CORS for browsers on other origins", async () => {
    const response = await rawRequest(`${fixture.server.url}/ofrep/v1/evaluate/flags`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key" },
    });
    expect(response.status).toBeLessThan(300);
    expect(response.headers["access-control-allow-origin"]).toBeDefined();
  });
});

describe("adminHosts (--admin-host)", () => {
  it("adds host names the admin API answers to", async () => {
    const named = await startAdminFixture({ adminHosts: ["flags.internal.test"] });
    try {
      const url = `${named.server.url}${environments}`;
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
      expect((await rawRequest(url, { headers: { ...headers, host: "flags.internal.test:8080" } })).status).toBe(200);
      expect((await rawRequest(url, { headers: { ...headers, host: "other.internal.test:8080" } })).status).toBe(421);
    } finally {
      await named.close();
    }
  });
});

describe("admin: false (--no-admin)", () => {
  it("has no admin API and no page; OFREP still works", async () => {
    const off = await startAdminFixture({ admin: false });
    try {
      expect(off.server.adminToken).toBeUndefined();
      for (const path of ["/", "/ui/app.js", environments]) {
        const response = await fetch(`${off.server.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(response.status, path).toBe(404);
        expect((await response.json()).errorCode).toBe("NOT_FOUND");
      }
      const ofrep = await fetch(`${off.server.url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": DEV_KEY } });
      expect(await ofrep.json()).toMatchObject({ value: "blue" });
    } finally {
      await off.close();
    }
  });
});
