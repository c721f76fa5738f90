/** The OFREP event stream (ADR-0008) with the real web provider and the eventsource package. */
import { writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature, ProviderEvents } from "@openfeature/web-sdk";
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { openSse } from "../helpers/sse.js";

// Node 20 has no EventSource; the web provider looks for the global.
(globalThis as { EventSource?: unknown }).EventSource ??= EventSource;

const KEY = "stream-key-0123456789";
const file = (banner: string, extra = "") => `apiKey: ${KEY}
flags:
  banner:
    variants: { a: "${banner}", b: "other" }
    defaultVariant: a
${extra}`;

let dir: TempDir;
let cli: CliProcess;
let url: string;
let edits = 0;

/** Each edit changes the banner text, so every edit is a real configuration change. */
async function edit(banner: string, extra = "") {
  edits++;
  await writeFile(dir.file("flags/dev.yaml"), file(banner, extra));
}

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/dev.yaml", file("hello"));
  ({ cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")]));
});

afterAll(async () => {
  await OpenFeature.close();
  await cli?.stop();
});

const bulk = (query = "", headers: Record<string, string> = {}) =>
  fetch(`${url}/ofrep/v1/evaluate/flags${query}`, { method: "POST", headers: { "x-api-key": KEY, ...headers }, body: "{}" });

describe("OFREP event stream", () => {
  it("is advertised in evaluate-all and streams unnamed refetchEvaluation messages", async () => {
    const first = await bulk();
    const body = await first.json();
    // A path, not a URL: the client resolves it against the origin it called (OFREP `endpoint`).
    expect(body.eventStreams).toEqual([
      { type: "sse", endpoint: { requestUri: expect.stringMatching(/^\/ofrep\/v1\/events\?token=/) }, inactivityDelaySec: 120 },
    ]);
    const streamUrl = new URL(body.eventStreams[0].endpoint.requestUri, url).href;
    expect(streamUrl).not.toContain(KEY);

    const sse = await openSse(streamUrl, { accept: "text/event-stream" });
    expect(sse.response.headers.get("content-type")).toBe("text/event-stream");
    await edit("changed once");
    const message = await sse.next((b) => b.data !== undefined);
    sse.close();
    expect(message.event).toBeUndefined();
    expect(message.id).toMatch(/^\d+$/);
    const payload = JSON.parse(message.data!);
    expect(payload).toEqual({ type: "refetchEvaluation", etag: expect.stringMatching(/^".+"$/), lastModified: expect.any(Number) });

    // The bulk ETag changed with the configuration, and the etag in the event names it.
    const second = await bulk(`?flagConfigEtag=${encodeURIComponent(payload.etag)}`, { "if-none-match": first.headers.get("etag")! });
    expect(second.status).toBe(200);
    expect(second.headers.get("etag")).not.toBe(first.headers.get("etag"));
    expect((await second.json()).flags[0].value).toBe("changed once");
  });

  it("never reflects the request's Host header", async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${url}/ofrep/v1/evaluate/flags`,
        { method: "POST", headers: { "x-api-key": KEY, host: "evil.example:666" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (c: string) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on("error", reject).end("{}");
    });
    expect(status).toBe(200);
    expect(body).not.toContain("evil.example");
  });

  it("rejects a missing or wrong token", async () => {
    expect((await fetch(`${url}/ofrep/v1/events`)).status).toBe(401);
    expect((await fetch(`${url}/ofrep/v1/events?token=${KEY}`)).status).toBe(401);
  });

  it("is read the same way by the eventsource package", async () => {
    const { eventStreams } = await (await bulk()).json();
    const source = new EventSource(new URL(eventStreams[0].endpoint.requestUri, url).href);
    try {
      const opened = new Promise<void>((resolve, reject) => {
        source.onopen = () => resolve();
        source.onerror = (e) => reject(new Error(`EventSource error: ${String(e.message)}`));
      });
      await opened;
      const received = new Promise<MessageEvent>((resolve) => source.addEventListener("message", resolve, { once: true }));
      await edit("seen by eventsource");
      const message = await received;
      expect(JSON.parse(message.data)).toMatchObject({ type: "refetchEvaluation" });
      expect(message.lastEventId).toMatch(/^\d+$/);
    } finally {
      source.close();
    }
  });

  it("makes the web provider emit ConfigurationChanged and serve the new value, without polling", async () => {
    const requests: string[] = [];
    const observedFetch: typeof fetch = async (input, init) => {
      requests.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    await OpenFeature.setContext({ targetingKey: "u1" });
    await OpenFeature.setProviderAndWait(
      new OFREPWebProvider({ baseUrl: url, headers: [["X-API-Key", KEY]], cacheMode: "disabled", fetchImplementation: observedFetch }),
    );
    const client = OpenFeature.getClient();
    const before = client.getStringValue("banner", "none");
    // The provider connects its EventSource after it is ready: wait for the server to see it.
    for (let i = 0; i < 100 && !/flagserve_sse_streams [1-9]/.test(await (await fetch(`${url}/metrics`)).text()); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const changed = new Promise<{ flagsChanged?: string[] }>((resolve) =>
      client.addHandler(ProviderEvents.ConfigurationChanged, (d) => resolve(d ?? {})),
    );
    await edit("live!");
    const details = await changed;
    expect(before).not.toBe("live!");
    expect(details.flagsChanged).toEqual(["banner"]);
    expect(client.getStringValue("banner", "none")).toBe("live!");
    // One initial fetch and one re-fetch triggered by the event: no polling.
    expect(requests).toHaveLength(2);
    expect(requests[1]).toContain("flagConfigEtag=");
    expect(edits).toBeGreaterThan(0);
  });
});
