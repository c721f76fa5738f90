/**
 * Fault injection seen by real clients: the OFREP server provider gets the errors, honours
 * Retry-After and times out on latency; the web provider's EventSource is dropped, refused, and
 * reconnects; probes and metrics are never touched.
 */
import { writeFile } from "node:fs/promises";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { OpenFeature as WebOpenFeature, ProviderEvents } from "@openfeature/web-sdk";
import { EventSource } from "eventsource";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, FaultRulesError, type EnvironmentInput, type FlagServer } from "../../src/index.js";
import { runCli, startCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/files.js";
import { openSse } from "../helpers/sse.js";

(globalThis as { EventSource?: unknown }).EventSource ??= EventSource;

const ci = (banner = "hello"): EnvironmentInput => ({
  apiKey: "faults-ci-key-0123456789",
  flags: {
    checkout: { variants: { on: true, off: false }, defaultVariant: "on" },
    banner: { variants: { a: banner, b: "other" }, defaultVariant: "a" },
  },
});

let server: FlagServer;
beforeAll(async () => {
  server = await createFlagServer({
    config: { environments: { ci: ci(), other: { apiKey: "faults-other-key-0123", flags: ci().flags } } },
    heartbeatSeconds: 1,
  });
});
afterEach(() => {
  server.setFaults([]);
});
afterAll(async () => {
  await OpenFeature.close();
  await WebOpenFeature.close();
  await server?.close();
});

let domains = 0;
function client(options: { fetchImplementation?: typeof fetch; key?: string } = {}) {
  const domain = `faults-${domains++}`;
  OpenFeature.setProvider(
    domain,
    new OFREPProvider({
      baseUrl: server.url,
      headers: [["X-API-Key", options.key ?? server.keys.ci!]],
      fetchImplementation: options.fetchImplementation,
    }),
  );
  return OpenFeature.getClient(domain);
}

/** Evaluations the server made for `flag` in `ci` (from /metrics): did a request reach it? */
async function evaluationsOf(flag: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const lines = text.split("\n").filter((l) => l.startsWith(`flagserve_evaluations_total{environment="ci",flag="${flag}",`));
  return lines.reduce((n, line) => n + Number(line.split(" ").pop()), 0);
}

describe("status faults", () => {
  it("answers the OFREP error body for the status; the client sees the error and the code default", async () => {
    server.setFaults([{ route: "evaluate", ratio: 1, status: 500 }]);
    expect(await client().getBooleanDetails("checkout", false)).toMatchObject({
      value: false,
      reason: "ERROR",
      errorCode: "GENERAL",
      errorMessage: "injected fault: 500 on evaluate",
    });
    const raw = await fetch(`${server.url}/ofrep/v1/evaluate/flags/checkout`, {
      method: "POST",
      headers: { "x-api-key": server.keys.ci! },
    });
    expect(raw.status).toBe(500);
    expect(await raw.json()).toEqual({ key: "checkout", errorCode: "INTERNAL", errorDetails: "injected fault: 500 on evaluate" });

    server.setFaults([{ route: "evaluate", ratio: 1, status: 401 }]);
    expect(await client().getBooleanDetails("checkout", false)).toMatchObject({ value: false, reason: "ERROR" });
    server.setFaults([]);
    expect(await client().getBooleanDetails("checkout", false)).toMatchObject({ value: true, reason: "STATIC" });
  });

  it("sends Retry-After with 429, and the provider holds back its requests until then", async () => {
    const c = client();
    expect(await c.getBooleanValue("checkout", false)).toBe(true);
    server.setFaults([{ route: "evaluate", ratio: 1, status: 429, retryAfter: 60 }]);
    expect(await c.getBooleanDetails("checkout", false)).toMatchObject({
      value: false,
      reason: "ERROR",
      errorMessage: expect.stringMatching(/rate limit/i),
    });
    server.setFaults([]);
    const reached = await evaluationsOf("checkout");
    // Within the 60 s the provider does not ask at all: the server evaluates nothing more.
    expect(await c.getBooleanDetails("checkout", false)).toMatchObject({
      value: false,
      errorMessage: expect.stringMatching(/paused due to TooManyRequests/),
    });
    expect(await evaluationsOf("checkout")).toBe(reached);

    server.setFaults([{ route: "evaluate-all", ratio: 1, status: 429, retryAfter: 7 }]);
    const bulk = await fetch(`${server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": server.keys.ci! } });
    expect(bulk.status).toBe(429);
    expect(bulk.headers.get("retry-after")).toBe("7");
    expect(await bulk.json()).toEqual({ errorCode: "RATE_LIMITED", errorDetails: "injected fault: 429 on evaluate-all" });
  });

  it("touches only the environment a rule names, and never the probes or metrics", async () => {
    server.setFaults([{ route: "evaluate", environment: "other", ratio: 1, status: 503 }]);
    expect(await client().getBooleanValue("checkout", false)).toBe(true);
    expect(await client({ key: server.keys.other }).getBooleanDetails("checkout", false)).toMatchObject({ value: false, reason: "ERROR" });
    server.setFaults([
      { route: "evaluate", ratio: 1, status: 500 },
      { route: "evaluate-all", ratio: 1, status: 500 },
      { route: "events", ratio: 1, status: 500 },
      { route: "ofrep-events", ratio: 1, status: 500 },
    ]);
    for (const path of ["/healthz", "/readyz", "/metrics"]) expect((await fetch(`${server.url}${path}`)).status, path).toBe(200);
  });
});

describe("latency faults", () => {
  it("delays the answer; a client with a shorter timeout gives up and falls back", async () => {
    server.setFaults([{ route: "evaluate", ratio: 1, latencyMs: 400 }]);
    const started = Date.now();
    expect(await client().getBooleanValue("checkout", false)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400); // a lower bound: the delay was added

    server.setFaults([{ route: "evaluate", ratio: 1, latencyMs: 10_000 }]);
    const impatient = client({ fetchImplementation: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(200) }) });
    expect(await impatient.getBooleanDetails("checkout", false)).toMatchObject({ value: false, reason: "ERROR", errorCode: "GENERAL" });
  });
});

describe("drop faults", () => {
  it("closes open streams at once and resets new connections for refuseSeconds", async () => {
    const stream = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.ci! });
    const other = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.other! });
    try {
      server.setFaults([{ route: "events", environment: "ci", ratio: 1, drop: true, refuseSeconds: 60 }]);
      await stream.ended;
      await expect(fetch(`${server.url}/api/v1/flags/events`, { headers: { "x-api-key": server.keys.ci! } })).rejects.toThrow(
        /fetch failed/,
      );
      // Another environment's stream stays open and new ones there are accepted.
      await other.next((b) => b.raw.startsWith(": heartbeat") || b.event === "heartbeat", 5_000);
      const again = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.other! });
      again.close();
      server.setFaults([]);
      const back = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": server.keys.ci! });
      expect(back.response.status).toBe(200);
      back.close();
    } finally {
      stream.close();
      other.close();
    }
  });

  it("makes the web provider's event stream reconnect once the refusal ends, and changes flow again", async () => {
    await WebOpenFeature.setContext({ targetingKey: "u1" });
    await WebOpenFeature.setProviderAndWait(
      new OFREPWebProvider({ baseUrl: server.url, headers: [["X-API-Key", server.keys.ci!]], cacheMode: "disabled" }),
    );
    const web = WebOpenFeature.getClient();
    const streamsOpen = async () =>
      Number(
        (await (await fetch(`${server.url}/metrics`)).text()).match(
          /^flagserve_sse_streams_open\{environment="ci",stream="ofrep"\} (\d+)$/m,
        )?.[1] ?? 0,
      );
    const refused = async () =>
      Number(
        (await (await fetch(`${server.url}/metrics`)).text()).match(
          /^flagserve_faults_injected_total\{route="ofrep-events",effect="refuse"\} (\d+)$/m,
        )?.[1] ?? 0,
      );
    const until = async (check: () => Promise<boolean>, what: string) => {
      for (let i = 0; i < 300; i++)
        if (await check()) return;
        else await new Promise((r) => setTimeout(r, 50));
      throw new Error(`timed out waiting for ${what}`);
    };
    await until(async () => (await streamsOpen()) === 1, "the provider's stream");

    const stale = new Promise<void>((resolve) => web.addHandler(ProviderEvents.Stale, () => resolve()));
    server.setFaults([{ route: "ofrep-events", ratio: 1, drop: true, refuseSeconds: 4 }]);
    await stale;
    expect(await streamsOpen()).toBe(0);
    // EventSource retries after 2 s (the stream's retry:), inside the 4 s refusal: reset.
    await until(async () => (await refused()) >= 1, "a refused reconnect");
    await until(async () => (await streamsOpen()) === 1, "the reconnected stream");

    const changed = new Promise<void>((resolve) => web.addHandler(ProviderEvents.ConfigurationChanged, () => resolve()));
    await server.update("ci", ci("after the outage"));
    await changed;
    expect(web.getStringValue("banner", "none")).toBe("after the outage");
  }, 30_000);
});

describe("setFaults and --fault", () => {
  it("rejects invalid rules with every problem named, keeping the active ones", () => {
    server.setFaults([{ route: "evaluate", ratio: 1, latencyMs: 1 }]);
    expect(() => server.setFaults([{ route: "evaluate", ratio: 3 } as never])).toThrow(FaultRulesError);
    expect(() => server.setFaults([{ route: "evaluate", ratio: 3 } as never, { route: "evaluate", ratio: 1 } as never])).toThrow(
      "invalid fault rules: rule 1: ratio must be <= 1; rule 2: needs exactly one effect, 'status', 'latencyMs' or 'drop'",
    );
    expect(server.faults()).toEqual([{ route: "evaluate", ratio: 1, latencyMs: 1 }]);
  });

  it("applies --fault rules for the whole run, and refuses bad ones as a usage error", async () => {
    const dir = await tempDir();
    await writeFile(
      dir.file("ci.yaml"),
      "apiKey: faults-cli-key-0123456789\nflags:\n  checkout:\n    variants: { on: true }\n    defaultVariant: on\n",
    );
    const { cli, url } = await startCli([
      dir.file("ci.yaml"),
      "--state-dir",
      dir.file("state"),
      "-q",
      "--fault",
      '{"route":"evaluate","ratio":1,"status":503}',
    ]);
    try {
      OpenFeature.setProvider("cli", new OFREPProvider({ baseUrl: url, headers: [["X-API-Key", "faults-cli-key-0123456789"]] }));
      expect(await OpenFeature.getClient("cli").getBooleanDetails("checkout", false)).toMatchObject({ value: false, reason: "ERROR" });
      const bulk = await fetch(`${url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": "faults-cli-key-0123456789" } });
      expect(bulk.status).toBe(200);
    } finally {
      await cli.stop();
    }
    const bad = runCli([dir.file("ci.yaml"), "--port", "0", "--fault", '{"route":"events","ratio":1,"latencyMs":5,"drop":true}']);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr()).toContain("needs exactly one effect, 'status', 'latencyMs' or 'drop' (found latencyMs, drop)");
  });
});
