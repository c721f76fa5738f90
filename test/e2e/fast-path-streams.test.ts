/**
 * Event streams open alike through the Node fast path and through h3: the same status, headers
 * and first bytes for every kind of request (keys, tokens, content types, replays, refusals), the
 * same counts in /metrics, the same per-address limit, and streams that deliver events either
 * way. A second app over the same store and hub, made with `fastPath: false`, answers every
 * request through h3, which gives the comparison.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadInlineConfig } from "../../src/config/index.js";
import { EventHub } from "../../src/events/hub.js";
import { createApp } from "../../src/http/app.js";
import { listenApp, type Listening } from "../../src/http/listen.js";
import type { Logger } from "../../src/log/logger.js";
import type { FlagDefinition } from "../../src/model/types.js";
import { createSnapshot, type EnvironmentSnapshot } from "../../src/store/snapshot.js";
import { FlagStore } from "../../src/store/store.js";
import { openSse } from "../helpers/sse.js";

const KEY = "stream-key-0123456789";
const MAX_STREAMS_PER_IP = 3;
const EVENTS = "/api/v1/flags/events";
const OFREP = "/ofrep/v1/events";

/** The app with its fast path, the same app without (`fastPath: false`), and the one requests go to. */
let withFastPath: Listening;
let h3Only: Listening;
let listening: Listening;
let hub: EventHub;
let token: string;
const logged: string[] = [];

const flagA = (value: string): FlagDefinition => ({
  state: "ENABLED",
  variants: { current: value },
  defaultVariant: "current",
  metadata: {},
});
let store: FlagStore;

/** Serves flag `a` with `value`, and announces the change on the environment's streams (as a reload does). */
async function serveValue(value: string, previous?: string): Promise<EnvironmentSnapshot> {
  const { config, flags } = (await loadInlineConfig({ dev: { apiKey: KEY, flags: { a: flagA(value) } } })).environments.get("dev")!;
  const snapshot = createSnapshot(config, flags, KEY);
  store.replace([snapshot]);
  if (previous !== undefined)
    hub.publish(snapshot, [{ kind: "flag", key: "a", change: "updated", before: flagA(previous), after: flagA(value) }]);
  return snapshot;
}

beforeAll(async () => {
  store = new FlagStore();
  hub = new EventHub();
  token = (await serveValue("one")).streamToken;
  const logger: Logger = { info: (line) => logged.push(line), warn: (line) => logged.push(line), error: (line) => logged.push(line) };
  const options = { store, hub, logger, maxStreamsPerIp: MAX_STREAMS_PER_IP, clientIpHeader: "x-forwarded-for" };
  const fast = createApp(options);
  const plain = createApp({ ...options, fastPath: false });
  expect(fast.fastPath).toBeDefined();
  expect(plain.fastPath).toBeUndefined();
  withFastPath = await listenApp(fast.app, { port: 0, host: "127.0.0.1", fastPath: fast.fastPath });
  h3Only = await listenApp(plain.app, { port: 0, host: "127.0.0.1" });
  listening = withFastPath;
  // Something to replay.
  await serveValue("two", "one");
});
afterAll(async () => {
  await Promise.all([withFastPath?.close(), h3Only?.close()]);
  hub?.close();
});

interface Opened {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body received within a moment of the head (the whole body of an error). */
  body: string;
}

/**
 * One raw request (no client adds headers; a flat list of names and values repeats a header),
 * read for a moment after its head, then closed; the Date header left out.
 */
function open(method: string, path: string, headers: Record<string, string> | string[]): Promise<Opened> {
  const list = Array.isArray(headers) ? ["Host", new URL(listening.url).host, ...headers] : headers;
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${listening.url}${path}`, { method, headers: list }, (res) => {
      let body = "";
      const done = () => {
        const { date: _date, ...rest } = res.headers;
        resolve({ status: res.statusCode!, headers: rest, body });
        req.destroy();
      };
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", done);
      if (res.statusCode === 200) setTimeout(done, 150);
    });
    req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
    req.end();
  });
}

const auth = { "x-api-key": KEY };
const sse = { ...auth, accept: "text/event-stream" };

/** Every kind of request the two routes get, as [method, path, headers]. */
const cases = (): [string, string, Record<string, string> | string[]][] => [
  ["GET", EVENTS, sse],
  ["GET", EVENTS, auth],
  ["GET", EVENTS, { authorization: `Bearer ${KEY}`, accept: "text/event-stream" }],
  ["GET", `${EVENTS}?lastEventId=0`, sse],
  ["GET", EVENTS, { ...sse, "last-event-id": "0" }],
  ["GET", EVENTS, { ...sse, "x-service-sdk": "raw/1.0" }],
  ["GET", EVENTS, {}],
  ["GET", EVENTS, { "x-api-key": "wrong-key-0123456789" }],
  ["GET", EVENTS, ["x-api-key", KEY, "X-Api-Key", KEY]],
  ["GET", `${OFREP}?token=${token}`, {}],
  ["GET", `${OFREP}?token=${token}&lastEventId=0`, {}],
  ["GET", `${OFREP}?token=wrong`, {}],
  ["GET", OFREP, {}],
  ["POST", EVENTS, auth],
  ["HEAD", EVENTS, auth],
];

async function openEach(): Promise<Opened[]> {
  const all: Opened[] = [];
  for (const [method, path, headers] of cases()) all.push(await open(method, path, headers));
  return all;
}

const metricLines = async (): Promise<Map<string, number>> => {
  const text = await (await fetch(`${listening.url}/metrics`)).text();
  const lines = text.split("\n").filter((line) => /^flagserve_(http|client)/.test(line));
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(" ")), Number(line.slice(line.lastIndexOf(" ") + 1))]));
};

const delta = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries([...after].map(([series, n]) => [series, n - (before.get(series) ?? 0)]).filter(([, n]) => n !== 0));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error(`gave up waiting for ${what}`);
}

/** Runs `fn` against the app without the fast path: every request through h3. */
async function viaH3<T>(fn: () => Promise<T>): Promise<T> {
  listening = h3Only;
  try {
    return await fn();
  } finally {
    listening = withFastPath;
  }
}

describe("stream openings on the Node fast path", () => {
  it("answer every kind of request as h3 does, with the same counts and log lines", async () => {
    const m0 = await metricLines();
    const logs0 = logged.length;
    const fast = await openEach();
    await until(() => hub.streamCount === 0, "the streams to close");
    const m1 = await metricLines();
    const fastLogs = logged.slice(logs0);
    const [h3, h3Counts] = await viaH3(async () => {
      const before = await metricLines();
      const opened = await openEach();
      await until(() => hub.streamCount === 0, "the streams to close");
      return [opened, delta(before, await metricLines())] as const;
    });

    expect(fast).toEqual(h3);
    expect(delta(m0, m1)).toEqual(h3Counts);
    expect(logged.slice(logs0 + fastLogs.length)).toEqual(fastLogs);

    // The answers are what they should be, not merely alike.
    expect(fast.map((o) => o.status)).toEqual([200, 200, 200, 200, 200, 200, 401, 401, 401, 200, 200, 401, 401, 405, 405]);
    expect(fast[0]!.headers).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "etag",
      "cache-control": "no-cache",
      "content-type": "text/event-stream",
      "x-accel-buffering": "no",
      "transfer-encoding": "chunked",
    });
    expect(fast[1]!.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(fast[0]!.body).toBe("retry: 2000\n\n");
    // From event 0 on, the change made before: replayed whether the id comes in the query or the header.
    expect(fast[3]!.body).toContain("event: flag-updated");
    expect(fast[4]!.body).toBe(fast[3]!.body);
    expect(fast[10]!.body).toContain('"type":"refetchEvaluation"');
    expect(JSON.parse(fast[6]!.body)).toMatchObject({ errorCode: "UNAUTHORIZED" });
    expect(fast[6]!.headers["www-authenticate"]).toBe('Bearer realm="flagserve"');
    expect(JSON.parse(fast[11]!.body)).toEqual({ errorCode: "UNAUTHORIZED", errorDetails: "unknown or missing stream token" });
    expect(delta(m0, m1)).toMatchObject({
      'flagserve_http_responses_total{route="/api/v1/flags/events",status="200"}': 6,
      'flagserve_http_responses_total{route="/ofrep/v1/events",status="200"}': 2,
      'flagserve_http_errors_total{code="UNAUTHORIZED"}': 5,
      'flagserve_client_requests_total{header="x-service-sdk",value="raw/1.0"}': 1,
    });
    expect(fastLogs.filter((line) => line.startsWith("stream opened: events dev from 127.0.0.1"))).toHaveLength(6);
  });

  it("refuse more streams from one address than allowed, and count an address free again once its stream closes", async () => {
    const from = (ip: string) => openSse(`${listening.url}${EVENTS}`, { ...sse, "x-forwarded-for": `${ip}, 10.0.0.1` });
    const refusals: Opened[] = [];
    for (const route of ["fast path", "h3"]) {
      const run = async () => {
        const held = [];
        for (let i = 0; i < MAX_STREAMS_PER_IP; i++) held.push(await from("203.0.113.7"));
        expect(held.map((s) => s.response.status)).toEqual([200, 200, 200]);
        const other = await from("203.0.113.8");
        expect(other.response.status).toBe(200);
        refusals.push(await open("GET", EVENTS, { ...sse, "x-forwarded-for": "203.0.113.7" }));
        held.pop()!.close();
        await until(() => hub.streamsFrom("203.0.113.7") === MAX_STREAMS_PER_IP - 1, `a stream fewer from 203.0.113.7 (${route})`);
        const again = await from("203.0.113.7");
        expect(again.response.status).toBe(200);
        for (const s of [...held, other, again]) s.close();
        await until(() => hub.streamCount === 0, "the streams to close");
        expect(hub.streamsFrom("203.0.113.7")).toBe(0);
      };
      await (route === "h3" ? viaH3(run) : run());
    }
    expect(refusals[0]).toEqual(refusals[1]);
    expect(refusals[0]).toMatchObject({ status: 429, headers: { "retry-after": "5" } });
    expect(JSON.parse(refusals[0]!.body)).toEqual({
      errorCode: "RATE_LIMITED",
      errorDetails: "too many open streams from 203.0.113.7 (at most 3)",
    });
  });

  it("deliver the changes that follow, on both streams", async () => {
    const events = await openSse(`${listening.url}${EVENTS}`, sse);
    const ofrep = await openSse(`${listening.url}${OFREP}?token=${token}`);
    try {
      await serveValue("three", "two");
      expect(JSON.parse((await events.next((b) => b.event === "flag-updated")).data!)).toMatchObject({ flagKey: "a" });
      expect(JSON.parse((await ofrep.next((b) => b.data !== undefined)).data!)).toMatchObject({ type: "refetchEvaluation" });
    } finally {
      events.close();
      ofrep.close();
    }
  });
});
