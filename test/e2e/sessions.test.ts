/**
 * The evaluation recorder with real OpenFeature clients: what a session holds is what the client
 * asked, in order, with the results it got; bounded; nothing kept without the header.
 */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { OpenFeature as WebOpenFeature } from "@openfeature/web-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, SESSION_HEADER, type FlagInput, type FlagServer } from "../../src/index.js";

const KEY = "sessions-key-0123456789";
let server: FlagServer;

beforeAll(async () => {
  server = await createFlagServer({
    config: {
      environments: {
        ci: {
          apiKey: KEY,
          flags: {
            checkout: {
              variants: { on: true, off: false },
              defaultVariant: "off",
              targeting: { if: [{ "==": [{ var: "plan" }, "premium"] }, "on", null] },
            },
            greeting: { variants: { hello: "hello", hi: "hi" }, defaultVariant: "hello" },
            split: {
              variants: { a: "a", b: "b" },
              defaultVariant: "a",
              targeting: {
                fractional: [
                  ["a", 50],
                  ["b", 50],
                ],
              },
            },
          },
        },
      },
    },
    contextValues: { shard: "7" },
  });
});
afterAll(async () => {
  await OpenFeature.close();
  await WebOpenFeature.close();
  await server?.close();
});

const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe("X-Flagserve-Session", () => {
  it("records what the server provider asked, in order, as received, with the answers it got", async () => {
    OpenFeature.setProvider(
      "recorded",
      new OFREPProvider({
        baseUrl: server.url,
        headers: [
          ["X-API-Key", KEY],
          ["X-Flagserve-Session", "checkout-test"],
        ],
      }),
    );
    const client = OpenFeature.getClient("recorded");
    const asked = [
      await client.getBooleanDetails("checkout", false, { targetingKey: "u1", plan: "premium" }),
      await client.getStringDetails("greeting", "?", { targetingKey: "u2" }),
      await client.getStringDetails("split", "?", {}),
      await client.getBooleanDetails("missing", false, { targetingKey: "u3" }),
      await client.getBooleanDetails("checkout", true, { targetingKey: "u4" }),
    ];
    expect(asked.map((d) => d.reason)).toEqual(["TARGETING_MATCH", "STATIC", "ERROR", "ERROR", "DEFAULT"]);

    expect(server.session("checkout-test")).toEqual({
      dropped: 0,
      evaluations: [
        {
          flagKey: "checkout",
          variant: "on",
          value: true,
          reason: "TARGETING_MATCH",
          context: { targetingKey: "u1", plan: "premium" },
          at,
        },
        { flagKey: "greeting", variant: "hello", value: "hello", reason: "STATIC", context: { targetingKey: "u2" }, at },
        { flagKey: "split", reason: "ERROR", errorCode: "TARGETING_KEY_MISSING", context: {}, at },
        { flagKey: "missing", reason: "ERROR", errorCode: "FLAG_NOT_FOUND", context: { targetingKey: "u3" }, at },
        { flagKey: "checkout", variant: "off", value: false, reason: "DEFAULT", context: { targetingKey: "u4" }, at },
      ],
    });
    // What the client got back is what was recorded.
    expect(asked[0]).toMatchObject({ value: true, variant: "on" });
    expect(asked[4]).toMatchObject({ value: false, variant: "off" });
    // The context as the client sent it: the static --context-value (shard) is not in it.
    expect(JSON.stringify(server.session("checkout-test"))).not.toContain("shard");
  });

  it("records every flag of an evaluate-all from the web provider, in the response's order", async () => {
    await WebOpenFeature.setContext({ targetingKey: "web-user", plan: "premium" });
    await WebOpenFeature.setProviderAndWait(
      new OFREPWebProvider({
        baseUrl: server.url,
        headers: [
          ["X-API-Key", KEY],
          ["X-Flagserve-Session", "web-1"],
        ],
        cacheMode: "disabled",
        changeDetection: "none",
      }),
    );
    const web = WebOpenFeature.getClient();
    const { evaluations } = server.session("web-1");
    expect(evaluations.map((e) => [e.flagKey, e.variant, e.value, e.reason])).toEqual([
      ["checkout", "on", true, "TARGETING_MATCH"],
      ["greeting", "hello", "hello", "STATIC"],
      ["split", web.getStringDetails("split", "?").variant, web.getStringValue("split", "?"), "SPLIT"],
    ]);
    expect(new Set(evaluations.map((e) => e.at)).size).toBe(1); // one request, one time
    expect(evaluations[0]!.context).toEqual({ targetingKey: "web-user", plan: "premium" });
  });

  it("records repeated identical requests each time (answers served from the cache included)", async () => {
    const ask = () =>
      fetch(`${server.url}/ofrep/v1/evaluate/flags`, {
        method: "POST",
        headers: { "x-api-key": KEY, [SESSION_HEADER]: "repeat" },
        body: '{"context":{"targetingKey":"r"}}',
      });
    for (let i = 0; i < 3; i++) expect((await ask()).status).toBe(200);
    for (let i = 0; i < 2; i++)
      await fetch(`${server.url}/ofrep/v1/evaluate/flags/greeting`, {
        method: "POST",
        headers: { "x-api-key": KEY, [SESSION_HEADER]: "repeat" },
        body: "{}",
      });
    const { evaluations } = server.session("repeat");
    expect(evaluations.map((e) => e.flagKey)).toEqual([
      "checkout",
      "greeting",
      "split",
      "checkout",
      "greeting",
      "split",
      "checkout",
      "greeting",
      "split",
      "greeting",
      "greeting",
    ]);
    expect(
      evaluations.filter((e) => e.flagKey === "split").every((e) => e.reason === "SPLIT" && e.variant === evaluations[2]!.variant),
    ).toBe(true);
    expect(server.clearSession("repeat")).toBe(true);
  });

  it("records nothing for requests without the header, and lists the sessions with their counts", async () => {
    const before = server.sessions();
    const plain = await fetch(`${server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": KEY } });
    expect(plain.status).toBe(200);
    expect(server.sessions()).toEqual(before);
    expect(before.map(({ id, evaluations, dropped }) => ({ id, evaluations, dropped }))).toEqual([
      { id: "checkout-test", evaluations: 5, dropped: 0 },
      { id: "web-1", evaluations: 3, dropped: 0 },
    ]);
    expect(server.session("never-used")).toEqual({ evaluations: [], dropped: 0 });
    expect(server.clearSession("web-1")).toBe(true);
    expect(server.session("web-1")).toEqual({ evaluations: [], dropped: 0 });
  });

  it("keeps the newest 10 000 entries of a session, counting the ones dropped", async () => {
    const flags: Record<string, FlagInput> = {};
    for (let i = 0; i < 100; i++) flags[`f${String(i).padStart(3, "0")}`] = { variants: { on: true }, defaultVariant: "on" };
    const big = await createFlagServer({ config: { environments: { big: { apiKey: KEY, flags } } } });
    try {
      for (let i = 0; i < 101; i++) {
        const res = await fetch(`${big.url}/ofrep/v1/evaluate/flags`, {
          method: "POST",
          headers: { "x-api-key": KEY, [SESSION_HEADER]: "bulk" },
          body: JSON.stringify({ context: { targetingKey: `request-${i}` } }),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      const { evaluations, dropped } = big.session("bulk");
      expect(dropped).toBe(100);
      expect(evaluations).toHaveLength(10_000);
      // The first request's entries went; the oldest kept is request 1's first flag.
      expect(evaluations[0]).toMatchObject({ flagKey: "f000", context: { targetingKey: "request-1" } });
      expect(evaluations.at(-1)).toMatchObject({ flagKey: "f099", context: { targetingKey: "request-100" } });
    } finally {
      await big.close();
    }
  });

  it("rejects an unusable session id with 400 INVALID_SESSION, and lets browsers send the header", async () => {
    const bad = await fetch(`${server.url}/ofrep/v1/evaluate/flags/checkout`, {
      method: "POST",
      headers: { "x-api-key": KEY, [SESSION_HEADER]: "x".repeat(129) },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errorCode: "INVALID_SESSION" });

    const preflight = await fetch(`${server.url}/ofrep/v1/evaluate/flags`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "x-api-key,x-flagserve-session",
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-flagserve-session");
  });

  it("1 MiB contexts: a session keeps them truncated and once per request, reading it over HTTP stays small, and an evicted session answers 410", async () => {
    const admin = (path: string) =>
      fetch(`${server.url}/api/v1/admin${path}`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    const body = JSON.stringify({ context: { targetingKey: "huge-user", blob: "z".repeat(900 * 1024) } });
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${server.url}/ofrep/v1/evaluate/flags`, {
        method: "POST",
        headers: { "x-api-key": KEY, [SESSION_HEADER]: "huge" },
        body,
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(server.sessions().find((s) => s.id === "huge")!.bytes).toBeLessThan(16 * 1024);
    const read = await admin("/sessions/huge");
    expect(read.status).toBe(200);
    const text = await read.text();
    expect(text.length).toBeLessThan(16 * 1024);
    const view = JSON.parse(text) as { evaluations: { contextId: string }[]; contexts: Record<string, Record<string, unknown>> };
    expect(view.evaluations).toHaveLength(24); // 8 requests x 3 flags
    expect(Object.keys(view.contexts)).toHaveLength(8); // one context per request
    expect(view.contexts[view.evaluations[0]!.contextId]).toEqual({
      $truncated: expect.stringMatching(/^context of \d+ bytes, over the 8192-byte limit/),
      targetingKey: "huge-user",
    });

    // 100 other sessions later "huge" is evicted: it says so, and does not read as never asked.
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${server.url}/ofrep/v1/evaluate/flags/greeting`, {
        method: "POST",
        headers: { "x-api-key": KEY, [SESSION_HEADER]: `filler-${i}` },
      });
      await res.arrayBuffer();
    }
    const evicted = await admin("/sessions/huge");
    expect(evicted.status).toBe(410);
    expect(await evicted.json()).toMatchObject({
      errorCode: "SESSION_EVICTED",
      errorDetails: "session huge was evicted (more than 100 sessions were recorded); its evaluations are gone",
    });
    expect(server.session("huge")).toEqual({ evaluations: [], dropped: 0, evicted: "more than 100 sessions were recorded" });
    expect((await admin("/sessions/never-asked")).status).toBe(200);
  });
});
