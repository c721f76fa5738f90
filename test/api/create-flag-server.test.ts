/** The programmatic API, used the way a user's test suite would, with the real OFREP provider. */
import { writeFile } from "node:fs/promises";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createFlagServer, InvalidConfigError, type EnvironmentInput, type FlagServer } from "../../src/index.js";
import { tempDir } from "../helpers/files.js";
import { openSse } from "../helpers/sse.js";

const checkout = (enabled: boolean): EnvironmentInput => ({
  apiKey: "suite-key-0123456789",
  segments: { beta: { ends_with: [{ var: "email" }, "@example.com"] } },
  flags: {
    "new-checkout": {
      variants: { on: true, off: false },
      defaultVariant: enabled ? "on" : "off",
      targeting: { if: [{ $ref: "beta" }, "on", null] },
    },
  },
});

const servers: FlagServer[] = [];
afterEach(async () => {
  await OpenFeature.clearProviders();
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => OpenFeature.close());

async function start(...args: Parameters<typeof createFlagServer>) {
  const server = await createFlagServer(...args);
  servers.push(server);
  return server;
}

describe("createFlagServer", () => {
  it("serves inline environments to the real OFREP provider, and update() changes answers", async () => {
    const server = await start({ config: { environments: { test: checkout(false), other: { flags: {} } } } });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.keys.test).toBe("suite-key-0123456789");
    expect(server.keys.other).toMatch(/^fs_other_/);

    await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: server.url, headers: [["X-API-Key", server.keys.test!]] }));
    const client = OpenFeature.getClient();
    expect(await client.getBooleanValue("new-checkout", true, { targetingKey: "u1" })).toBe(false);
    expect(await client.getBooleanDetails("new-checkout", false, { targetingKey: "u1", email: "ada@example.com" })).toMatchObject({
      value: true,
      reason: "TARGETING_MATCH",
    });

    await server.update("test", checkout(true));
    expect(await client.getBooleanDetails("new-checkout", false, { targetingKey: "u1" })).toMatchObject({ value: true, reason: "DEFAULT" });
  });

  it("answers the same evaluate-all request anew after update(), never 304 to the old tag", async () => {
    const server = await start({ config: { environments: { test: checkout(false) } } });
    const evaluateAll = (headers: Record<string, string> = {}) =>
      fetch(`${server.url}/ofrep/v1/evaluate/flags`, {
        method: "POST",
        headers: { "x-api-key": server.keys.test!, ...headers },
        body: JSON.stringify({ context: { targetingKey: "u1" } }),
      });
    const before = await evaluateAll();
    const etag = before.headers.get("etag")!;
    expect((await before.json()).flags).toMatchObject([{ key: "new-checkout", value: false }]);
    expect((await evaluateAll({ "if-none-match": etag })).status).toBe(304);

    await server.update("test", checkout(true));
    const after = await evaluateAll({ "if-none-match": etag });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect((await after.json()).flags).toMatchObject([{ key: "new-checkout", value: true }]);
  });

  it("sends the same change events for update() as for a file edit", async () => {
    const server = await start({ config: { environments: { test: checkout(false) } } });
    const sse = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.test!, accept: "text/event-stream" });
    try {
      const next = checkout(true);
      next.segments = { beta: { ends_with: [{ var: "email" }, "@example.org"] } };
      await server.update("test", next);
      await sse.next((b) => b.event === "config-updated");
      expect(sse.events().map((e) => [e.event, JSON.parse(e.data!).flagKey ?? JSON.parse(e.data!).reason])).toEqual([
        ["flag-updated", "new-checkout"],
        ["config-updated", "segment-modified"],
      ]);
    } finally {
      sse.close();
    }
  });

  it("close() resolves with an event stream and an idle keep-alive connection open, ending both", async () => {
    const server = await createFlagServer({ config: { environments: { test: checkout(false) } } });
    const sse = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.test!, accept: "text/event-stream" });
    try {
      const res = await fetch(`${server.url}/ofrep/v1/evaluate/flags`, {
        method: "POST",
        headers: { "x-api-key": server.keys.test! },
        body: "{}",
      });
      expect(res.status).toBe(200);
      await res.text(); // the connection goes back to the client's pool, open and idle
      await server.close();
      await sse.ended;
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      sse.close();
    }
  });

  it("rejects an invalid update with the loader's messages and keeps serving the last good one", async () => {
    const server = await start({ config: { environments: { test: checkout(false) } } });
    const bad = checkout(true);
    bad.flags["new-checkout"]!.defaultVariant = "maybe";
    const error = await server.update("test", bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect((error as InvalidConfigError).problems[0]!.message).toMatch(/maybe/);
    expect((error as Error).message).toContain("<inline:test>");
    const res = await fetch(`${server.url}/ofrep/v1/evaluate/flags/new-checkout`, {
      method: "POST",
      headers: { "x-api-key": server.keys.test! },
    });
    expect(await res.json()).toMatchObject({ value: false });
  });

  it("refuses to start on an invalid inline config", async () => {
    const bad = checkout(false);
    bad.flags["new-checkout"]!.state = "MAYBE" as "ENABLED";
    await expect(createFlagServer({ config: { environments: { test: bad } } })).rejects.toThrow(InvalidConfigError);
  });

  it("serves a path and follows edits to it", async () => {
    const dir = await tempDir();
    const file = await dir.write(
      "flags/ci.yaml",
      `apiKey: ci-key-0123456789\nflags:\n  f:\n    variants: { a: 1, b: 2 }\n    defaultVariant: a\n`,
    );
    const server = await start({ config: dir.file("flags"), stateDir: dir.file("state") });
    const evaluate = async () =>
      (await (await fetch(`${server.url}/ofrep/v1/evaluate/flags/f`, { method: "POST", headers: { "x-api-key": server.keys.ci! } })).json())
        .value;
    expect(await evaluate()).toBe(1);
    await writeFile(file, `apiKey: ci-key-0123456789\nflags:\n  f:\n    variants: { a: 1, b: 2 }\n    defaultVariant: b\n`);
    let value = 1;
    for (let i = 0; i < 100 && value !== 2; i++) {
      await new Promise((r) => setTimeout(r, 30));
      value = await evaluate();
    }
    expect(value).toBe(2);
  });
});
