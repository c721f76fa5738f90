/** Per-flag evaluation counts and per-environment stream counts on /metrics, driven by real clients. */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { openSse } from "../helpers/sse.js";

let server: FlagServer;

beforeAll(async () => {
  server = await createFlagServer({
    config: {
      environments: {
        dev: {
          apiKey: "metrics-dev-key-0123",
          flags: {
            checkout: {
              variants: { on: true, off: false },
              defaultVariant: "off",
              targeting: { if: [{ "==": [{ var: "plan" }, "premium"] }, "on", null] },
            },
            "no-default": { variants: { a: "a" }, defaultVariant: null },
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
        prod: { apiKey: "metrics-prod-key-0123", flags: { checkout: { variants: { on: true, off: false }, defaultVariant: "on" } } },
      },
    },
  });
  OpenFeature.setProvider("dev", new OFREPProvider({ baseUrl: server.url, headers: [["X-API-Key", server.keys.dev!]] }));
});
afterAll(async () => {
  await OpenFeature.close();
  await server?.close();
});

const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
const sample = (text: string, labels: string) =>
  Number(text.match(new RegExp(`^flagserve_evaluations_total\\{${labels.replace(/[(){}]/g, "\\$&")}\\} (\\d+)$`, "m"))?.[1] ?? 0);

describe("flagserve_evaluations_total", () => {
  it("counts each evaluation by environment, flag, variant and reason", async () => {
    const client = OpenFeature.getClient("dev");
    for (let i = 0; i < 3; i++) await client.getBooleanValue("checkout", false, { targetingKey: "u1", plan: "premium" });
    await client.getBooleanValue("checkout", false, { targetingKey: "u1" });
    await client.getStringValue("split", "?", {}); // no targetingKey: TARGETING_KEY_MISSING
    await client.getStringValue("no-default", "?", { targetingKey: "u1" });
    // The same evaluate-all three times: answered from the cache after the first, counted every time.
    for (let i = 0; i < 3; i++)
      await (
        await fetch(`${server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": server.keys.prod! }, body: "{}" })
      ).text();

    const text = await metrics();
    expect(text).toContain("# TYPE flagserve_evaluations_total counter");
    expect(sample(text, 'environment="dev",flag="checkout",variant="on",reason="TARGETING_MATCH"')).toBe(3);
    expect(sample(text, 'environment="dev",flag="checkout",variant="off",reason="DEFAULT"')).toBe(1);
    expect(sample(text, 'environment="dev",flag="split",variant="",reason="ERROR"')).toBe(1);
    expect(sample(text, 'environment="dev",flag="no-default",variant="",reason="DEFAULT"')).toBe(1);
    expect(sample(text, 'environment="prod",flag="checkout",variant="on",reason="STATIC"')).toBe(3);
  });

  it("counts keys that are not in the configuration under one label value, whatever the key", async () => {
    const client = OpenFeature.getClient("dev");
    const before = sample(await metrics(), 'environment="dev",flag="(other)",variant="",reason="ERROR"');
    for (let i = 0; i < 20; i++)
      expect(await client.getBooleanDetails(`made-up-${i}`, false, {})).toMatchObject({ errorCode: "FLAG_NOT_FOUND" });
    const text = await metrics();
    expect(sample(text, 'environment="dev",flag="(other)",variant="",reason="ERROR"')).toBe(before + 20);
    expect(text).not.toContain("made-up-");
  });
});

describe("flagserve_sse_streams_open", () => {
  it("reports open streams per environment and kind", async () => {
    const streams = [
      await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.dev! }),
      await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.dev! }),
      await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.prod! }),
    ];
    try {
      const text = await metrics();
      expect(text).toContain("# TYPE flagserve_sse_streams_open gauge");
      expect(text).toMatch(/^flagserve_sse_streams_open\{environment="dev",stream="events"\} 2$/m);
      expect(text).toMatch(/^flagserve_sse_streams_open\{environment="prod",stream="events"\} 1$/m);
      expect(text).toMatch(/^flagserve_sse_streams_open\{environment="dev",stream="ofrep"\} 0$/m);
    } finally {
      for (const s of streams) s.close();
    }
  });
});
