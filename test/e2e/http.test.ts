/** The HTTP contract (see docs/api.md) over real HTTP against the real CLI process. */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CLIENT_VALUES } from "../../src/http/metrics.js";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { OFREP_FIXTURE, OTHER_FIXTURE, OTHER_KEY, TEST_KEY } from "../helpers/fixtures.js";

let dir: TempDir;
let cli: CliProcess;
let base: string;

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/test.yaml", OFREP_FIXTURE);
  await dir.write("flags/other.yaml", OTHER_FIXTURE);
  ({ cli, url: base } = await startCli([dir.file("flags"), "--max-body", "64kb"]));
});

afterAll(async () => {
  await cli?.stop();
});

const post = (path: string, body: string | undefined, headers: Record<string, string> = { "x-api-key": TEST_KEY }) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
const evalOne = (key: string, context: unknown = { targetingKey: "u1" }, headers?: Record<string, string>) =>
  post(`/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`, JSON.stringify({ context }), headers);
const evalAll = (context: unknown = { targetingKey: "u1" }, headers: Record<string, string> = {}, query = "") =>
  post(`/ofrep/v1/evaluate/flags${query}`, JSON.stringify({ context }), { "x-api-key": TEST_KEY, ...headers });

describe("single-flag evaluation", () => {
  it.each([
    ["bool-flag", true, "on"],
    ["string-flag", "blue", "blue"],
    ["int-flag", 42, "answer"],
    ["float-flag", 3.14, "pi"],
    ["object-flag", { a: 1, b: { c: true } }, "nested"],
  ])("%s resolves statically with its JSON type", async (key, value, variant) => {
    const res = await evalOne(key);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toMatchObject({ key, value, variant, reason: "STATIC" });
    expect(body).not.toHaveProperty("errorCode");
  });

  it("keeps integers integers on the wire", async () => {
    const text = await (await evalOne("int-flag")).text();
    expect(text).toContain('"value":42,');
  });

  it("matches targeting through a segment, and falls back to the default otherwise", async () => {
    expect(await (await evalOne("targeted-flag", { targetingKey: "u1", plan: "premium" })).json()).toMatchObject({
      value: true,
      variant: "vip",
      reason: "TARGETING_MATCH",
    });
    expect(await (await evalOne("targeted-flag", { targetingKey: "u1", plan: "free" })).json()).toMatchObject({
      value: false,
      variant: "default",
      reason: "DEFAULT",
    });
  });

  it("merges context.properties under top-level attributes", async () => {
    const viaProperties = await (await evalOne("targeted-flag", { targetingKey: "u1", properties: { plan: "premium" } })).json();
    expect(viaProperties).toMatchObject({ variant: "vip" });
    const topLevelWins = await (
      await evalOne("targeted-flag", { targetingKey: "u1", plan: "free", properties: { plan: "premium" } })
    ).json();
    expect(topLevelWins).toMatchObject({ variant: "default" });
  });

  it("reports SPLIT for fractional, and 400 TARGETING_KEY_MISSING without a targeting key", async () => {
    const split = await evalOne("split-flag", { targetingKey: "user-7" });
    expect(split.status).toBe(200);
    expect(await split.json()).toMatchObject({ key: "split-flag", reason: "SPLIT" });
    const missing = await evalOne("split-flag", {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ key: "split-flag", errorCode: "TARGETING_KEY_MISSING" });
  });

  it("omits the value for DISABLED and for code-default flags", async () => {
    const disabled = await (await evalOne("disabled-flag")).json();
    expect(disabled).toMatchObject({ key: "disabled-flag", reason: "DISABLED" });
    expect(disabled).not.toHaveProperty("value");
    const codeDefault = await (await evalOne("default-flag")).json();
    expect(codeDefault).toMatchObject({ key: "default-flag", reason: "DEFAULT" });
    expect(codeDefault).not.toHaveProperty("value");
  });

  it("merges flag metadata over flag-set metadata", async () => {
    const body = await (await evalOne("meta-flag")).json();
    expect(body.metadata).toEqual({ flagSetId: "fixture", team: "ecommerce", version: 4, beta: true });
  });

  it("answers 400 GENERAL when targeting returns something that is not a variant", async () => {
    const res = await evalOne("bad-target-flag", { targetingKey: "u1", plan: "broken" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ key: "bad-target-flag", errorCode: "GENERAL" });
  });

  it("answers 404 FLAG_NOT_FOUND with the decoded key", async () => {
    const res = await evalOne("no/such flag");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ key: "no/such flag", errorCode: "FLAG_NOT_FOUND" });
  });

  it("treats a missing body, {} and an absent context as an empty context", async () => {
    for (const body of [undefined, "", "{}", '{"context":{}}']) {
      const res = await post("/ofrep/v1/evaluate/flags/bool-flag", body);
      expect(res.status, `body ${body}`).toBe(200);
    }
  });

  it("parses JSON whatever the Content-Type says", async () => {
    const res = await fetch(`${base}/ofrep/v1/evaluate/flags/bool-flag`, {
      method: "POST",
      headers: { "x-api-key": TEST_KEY, "content-type": "application/x-www-form-urlencoded" },
      body: '{"context":{"targetingKey":"u1"}}',
    });
    expect(res.status).toBe(200);
  });

  it.each([
    ['{"context":', "not valid JSON"],
    ['{"context":"not-an-object"}', "context must be a JSON object"],
    ['{"context":[1,2]}', "context must be a JSON object"],
    ['{"context":{"properties":5}}', "context.properties must be a JSON object"],
    ['{"context":{"targetingKey":7}}', "targetingKey must be a string"],
    ["[1]", "request body must be a JSON object"],
  ])("rejects %s with 400 INVALID_CONTEXT carrying the key", async (body, details) => {
    const single = await post("/ofrep/v1/evaluate/flags/bool-flag", body);
    expect(single.status).toBe(400);
    const singleBody = await single.json();
    expect(singleBody).toMatchObject({ key: "bool-flag", errorCode: "INVALID_CONTEXT" });
    expect(singleBody.errorDetails).toContain(details);
    const bulk = await post("/ofrep/v1/evaluate/flags", body);
    expect(bulk.status).toBe(400);
    const bulkBody = await bulk.json();
    expect(bulkBody).toMatchObject({ errorCode: "INVALID_CONTEXT" });
    expect(bulkBody).not.toHaveProperty("flags");
  });
});

describe("authentication", () => {
  it("answers 401 without a key or with an unknown one, on both routes", async () => {
    for (const path of ["/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/bool-flag"]) {
      for (const headers of [{}, { "x-api-key": "wrong-key" }, { authorization: "Bearer wrong-key" }]) {
        const res = await post(path, "{}", headers);
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ errorCode: "UNAUTHORIZED", errorDetails: expect.any(String) });
      }
    }
  });

  it("accepts Authorization: Bearer", async () => {
    const res = await post("/ofrep/v1/evaluate/flags/bool-flag", "{}", { authorization: `Bearer ${TEST_KEY}` });
    expect(res.status).toBe(200);
  });

  it("scopes every result to the key's environment", async () => {
    const res = await post("/ofrep/v1/evaluate/flags", "{}", { "x-api-key": OTHER_KEY });
    const body = await res.json();
    expect(body.flags.map((f: { key: string }) => f.key)).toEqual(["bool-flag"]);
    expect(body.flags[0]).toMatchObject({ value: false, variant: "off" });
    const missing = await post("/ofrep/v1/evaluate/flags/string-flag", "{}", { "x-api-key": OTHER_KEY });
    expect(missing.status).toBe(404);
  });
});

describe("evaluate-all", () => {
  it("returns one item per flag, errors inlined and mirrored in result, disabled flags included", async () => {
    const res = await evalAll({});
    expect(res.status).toBe(200);
    const body = await res.json();
    const keys = body.flags.map((f: { key: string }) => f.key);
    expect(keys).toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(11);
    const byKey = Object.fromEntries(body.flags.map((f: { key: string }) => [f.key, f]));
    expect(byKey["split-flag"]).toEqual({
      key: "split-flag",
      errorCode: "TARGETING_KEY_MISSING",
      errorDetails: expect.any(String),
      result: { key: "split-flag", errorCode: "TARGETING_KEY_MISSING", errorDetails: expect.any(String) },
      metadata: { flagSetId: "fixture", version: 3 },
    });
    expect(byKey["disabled-flag"]).toMatchObject({ reason: "DISABLED" });
    expect(byKey["default-flag"]).not.toHaveProperty("value");
    expect(body.metadata).toEqual({ flagSetId: "fixture", version: 3 });
  });

  it("agrees with the single-flag endpoint for every flag", async () => {
    const context = { targetingKey: "u9", plan: "premium" };
    const bulk = await (await evalAll(context)).json();
    for (const item of bulk.flags) {
      const single = await (await evalOne(item.key, context)).json();
      const { result: _mirror, ...rest } = item;
      expect(single).toEqual(rest);
    }
  });
});

describe("ETag and If-None-Match", () => {
  const context = { targetingKey: "u1", plan: "premium" };

  it("is strong, quoted and deterministic", async () => {
    const a = (await evalAll(context)).headers.get("etag");
    const b = (await evalAll(context)).headers.get("etag");
    expect(a).toMatch(/^"[^"]+"$/);
    expect(b).toBe(a);
  });

  it("answers 304 with the ETag and no body when it matches", async () => {
    const etag = (await evalAll(context)).headers.get("etag")!;
    const res = await evalAll(context, { "if-none-match": etag });
    expect(res.status).toBe(304);
    expect(res.headers.get("etag")).toBe(etag);
    expect(res.headers.get("content-type")).toBeNull();
    expect(await res.text()).toBe("");
  });

  it.each([
    ["weak", (e: string) => `W/${e}`],
    ["unquoted", (e: string) => e.slice(1, -1)],
    ["in a list", (e: string) => `"nope", ${e}`],
    ["*", () => "*"],
  ])("matches an If-None-Match that is %s", async (_name, form) => {
    const etag = (await evalAll(context)).headers.get("etag")!;
    expect((await evalAll(context, { "if-none-match": form(etag) })).status).toBe(304);
  });

  it("never answers 304 to a stale tag or a changed context", async () => {
    const etag = (await evalAll(context)).headers.get("etag")!;
    expect((await evalAll(context, { "if-none-match": '"definitely-stale"' })).status).toBe(200);
    const changed = await evalAll({ targetingKey: "u1", plan: "free" }, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
  });

  it("accepts flagConfigEtag and never downgrades a differing one to 304", async () => {
    const etag = (await evalAll(context)).headers.get("etag")!;
    const differing = await evalAll(context, { "if-none-match": etag }, "?flagConfigEtag=other&flagConfigLastModified=1771622898");
    expect(differing.status).toBe(200);
  });
});

describe("transport", () => {
  it("answers 405 with Allow for other methods, and a JSON 404 for unknown routes", async () => {
    const get = await fetch(`${base}/ofrep/v1/evaluate/flags`, { headers: { "x-api-key": TEST_KEY } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toContain("POST");
    expect(await get.json()).toMatchObject({ errorCode: "METHOD_NOT_ALLOWED" });
    const put = await fetch(`${base}/ofrep/v1/evaluate/flags/bool-flag`, { method: "PUT", headers: { "x-api-key": TEST_KEY } });
    expect(put.status).toBe(405);
    const unknown = await fetch(`${base}/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ errorCode: "NOT_FOUND" });
  });

  it("answers 413 to a declared oversized body and stays up", async () => {
    const res = await post("/ofrep/v1/evaluate/flags", JSON.stringify({ context: { pad: "x".repeat(70_000) } }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE" });
    expect((await evalOne("bool-flag")).status).toBe(200);
  });

  it("answers 413 to an oversized chunked body and stays up", async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL("/ofrep/v1/evaluate/flags", base);
      let answered = false;
      const req = httpRequest(url, { method: "POST", headers: { "x-api-key": TEST_KEY, "transfer-encoding": "chunked" } }, (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode!, body: text }));
      });
      // The server answers and closes as soon as the limit is passed; writes still in flight may then fail.
      req.on("error", (error) => {
        if (!answered) reject(error);
      });
      const chunk = "x".repeat(8192);
      for (let sent = 0; sent < 80_000; sent += chunk.length) req.write(chunk);
      req.end();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE" });
    expect((await evalOne("bool-flag")).status).toBe(200);
  });

  it("answers CORS preflights on the API routes, allowing the request headers asked for", async () => {
    // What the OFREP providers and the Flipswitch SDKs send from a browser.
    const asked =
      "content-type, if-none-match, authorization, x-api-key, x-service-sdk, x-flipswitch-sdk, x-flipswitch-runtime, cache-control, last-event-id";
    for (const [path, method] of [
      ["/ofrep/v1/evaluate/flags", "POST"],
      ["/ofrep/v1/evaluate/flags/bool-flag", "POST"],
      ["/api/v1/flags/events", "GET"],
      ["/ofrep/v1/events", "GET"],
    ]) {
      const preflight = await fetch(`${base}${path}`, {
        method: "OPTIONS",
        headers: { origin: "http://app.example", "access-control-request-method": method!, "access-control-request-headers": asked },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
      const allowed = preflight.headers
        .get("access-control-allow-headers")!
        .toLowerCase()
        .split(/\s*,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(asked.split(/\s*,\s*/)));
      expect(preflight.headers.get("access-control-allow-methods")).toContain(method);
      // The answer depends on what was asked: caches must key on it.
      expect(preflight.headers.get("vary")?.toLowerCase()).toContain("access-control-request-headers");
    }
    const res = await evalAll({}, { origin: "http://app.example" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("etag");
  });

  it("sends no CORS headers on the operational routes", async () => {
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      const res = await fetch(`${base}${path}`, { headers: { origin: "http://evil.example" } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
      const preflight = await fetch(`${base}${path}`, {
        method: "OPTIONS",
        headers: { origin: "http://evil.example", "access-control-request-method": "GET" },
      });
      expect(preflight.headers.get("access-control-allow-origin"), path).toBeNull();
    }
  });

  it("sends the standard reason phrase and one JSON Content-Type on every JSON route", async () => {
    const statusLine = (path: string, method = "GET", headers: Record<string, string> = {}) =>
      new Promise<{ code: number; message: string; type: string | undefined }>((resolve, reject) => {
        const req = httpRequest(new URL(path, base), { method, headers }, (res) => {
          res.resume();
          resolve({ code: res.statusCode!, message: res.statusMessage!, type: res.headers["content-type"] });
        });
        req.on("error", reject).end();
      });
    const key = { "x-api-key": TEST_KEY };
    const cases: [string, string, Record<string, string>, number, string][] = [
      ["/ofrep/v1/evaluate/flags", "POST", key, 200, "OK"],
      ["/ofrep/v1/evaluate/flags/bool-flag", "POST", key, 200, "OK"],
      ["/ofrep/v1/evaluate/flags/split-flag", "POST", key, 400, "Bad Request"],
      ["/ofrep/v1/evaluate/flags/nope", "POST", key, 404, "Not Found"],
      ["/ofrep/v1/evaluate/flags", "POST", {}, 401, "Unauthorized"],
      ["/ofrep/v1/evaluate/flags", "GET", key, 405, "Method Not Allowed"],
      ["/healthz", "GET", {}, 200, "OK"],
      ["/readyz", "GET", {}, 200, "OK"],
      ["/nope", "GET", {}, 404, "Not Found"],
    ];
    for (const [path, method, headers, code, message] of cases) {
      expect(await statusLine(path, method, headers), `${method} ${path}`).toEqual({ code, message, type: "application/json" });
    }
  });

  it("answers the documented codes for an empty flag key, a bad %-escape and oversized headers", async () => {
    const empty = await post("/ofrep/v1/evaluate/flags/", "{}");
    expect(empty.status).toBe(404);
    expect(await empty.json()).toEqual({ key: "", errorCode: "FLAG_NOT_FOUND", errorDetails: expect.any(String) });

    const badEscape = await post("/ofrep/v1/evaluate/flags/%E0%A4%A", "{}");
    expect(badEscape.status).toBe(404);
    expect(await badEscape.json()).toMatchObject({ errorCode: "NOT_FOUND" });

    const huge = await post("/ofrep/v1/evaluate/flags", "{}", { "x-api-key": TEST_KEY, "x-padding": "x".repeat(20_000) });
    expect(huge.status).toBe(431);
    expect(huge.headers.get("content-type")).toBe("application/json");
    expect(await huge.json()).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE" });

    expect((await evalOne("bool-flag")).status).toBe(200);
  });

  it("serves probes and metrics without a key and without flag data", async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", environments: 2, problems: [] });
    await post("/ofrep/v1/evaluate/flags/bool-flag", "{}", { "x-api-key": TEST_KEY, "x-service-sdk": "test-sdk/1.0" });
    await post("/ofrep/v1/evaluate/flags/bool-flag", "{}", { "x-api-key": TEST_KEY, "x-flipswitch-sdk": "javascript/1.0.0" });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('flagserve_client_requests_total{header="x-service-sdk",value="test-sdk/1.0"}');
    expect(metrics).toContain('flagserve_client_requests_total{header="x-flipswitch-sdk",value="javascript/1.0.0"} 1');
    expect(metrics).toContain("flagserve_environments 2");
    expect(metrics).toMatch(/^flagserve_http_responses_total\{route="\/ofrep\/v1\/evaluate\/flags\/:key",status="200"\} \d+$/m);
    expect(metrics).toMatch(/^flagserve_http_responses_total\{route="\/ofrep\/v1\/evaluate\/flags",status="304"\} \d+$/m);
    // Flag keys and variant names appear only as labels of the evaluation counts: no values, no metadata.
    const flagLines = metrics.split("\n").filter((line) => line.includes("bool-flag"));
    expect(flagLines.length).toBeGreaterThan(0);
    expect(
      flagLines.every((line) =>
        /^flagserve_evaluations_total\{environment="\w+",flag="bool-flag",variant="\w*",reason="[A-Z_]+"\} \d+$/.test(line),
      ),
    ).toBe(true);
  });

  it("bounds the client identification series: past a fixed number of values per header, the rest count as other", async () => {
    const distinct = 200;
    for (let i = 0; i < distinct; i++) {
      const res = await fetch(`${base}/healthz`, { headers: { "x-service-runtime": `probe-runtime/${i}` } }); // any route, no key
      await res.arrayBuffer();
    }
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const series = metrics.split("\n").filter((line) => line.startsWith('flagserve_client_requests_total{header="x-service-runtime"'));
    expect(series.length).toBeLessThanOrEqual(MAX_CLIENT_VALUES + 1);
    const other = series.find((line) => line.includes('value="other"'));
    expect(other).toBeDefined();
    const total = series.reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
    expect(total).toBe(distinct); // nothing lost, only folded
    expect(Number(other!.split(" ").pop())).toBe(distinct - (series.length - 1));
  });
});
