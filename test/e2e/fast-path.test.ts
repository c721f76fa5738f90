/**
 * The evaluation routes answer alike through the Node fast path and through h3: the same status,
 * headers and body for every kind of request, the same counts in /metrics and the same session
 * entries. The same configuration is served a second time with `fastPath: false`, every request
 * through h3, which gives the comparison. Oversized bodies (413, declared and chunked) are
 * covered by http.test.ts, which runs on the fast path.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer, type FlagServerOptions } from "../../src/index.js";

const KEY = "fast-path-key-0123456789";
/** The same configuration served twice: with the fast path (the default), and without it. */
let server: FlagServer;
let h3Server: FlagServer;
/** The one requests go to. */
let current: FlagServer;

const options: FlagServerOptions = {
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
          "team/banner": {
            variants: { red: "red", blue: "blue" },
            defaultVariant: "blue",
            targeting: { if: [{ "==": [{ var: "team" }, "a"] }, "red", null] },
          },
          split: {
            variants: { on: true, off: false },
            defaultVariant: "off",
            targeting: {
              fractional: [
                ["on", 50],
                ["off", 50],
              ],
            },
          },
        },
      },
    },
  },
  contextFromHeaders: { "x-team": "team" },
};

beforeAll(async () => {
  [server, h3Server] = await Promise.all([createFlagServer(options), createFlagServer({ ...options, fastPath: false })]);
  current = server;
});
afterAll(async () => {
  await Promise.all([server?.close(), h3Server?.close()]);
});

/** Runs `fn` against the server without the fast path (`fastPath: false`): every request through h3. */
async function viaH3<T>(fn: () => Promise<T>): Promise<T> {
  current = h3Server;
  try {
    return await fn();
  } finally {
    current = server;
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One raw HTTP request (no client adds or drops headers; a flat list of names and values repeats
 * a header); the Date header left out.
 */
function send(method: string, path: string, headers: Record<string, string> | string[], body?: string): Promise<Answer> {
  // A list is sent as it is: Host and Content-Length, which Node adds to an object, go in it.
  const list = Array.isArray(headers)
    ? ["Host", new URL(current.url).host, ...headers, "Content-Length", String(Buffer.byteLength(body ?? ""))]
    : headers;
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${current.url}${path}`, { method, headers: list }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        const { date: _date, ...rest } = res.headers;
        resolve({ status: res.statusCode!, headers: rest, body: text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ALL = "/ofrep/v1/evaluate/flags";
const auth = { "x-api-key": KEY };
const premium = JSON.stringify({ context: { targetingKey: "u-1", plan: "premium" } });

/** Every kind of request the two routes get, as [method, path, headers, body]. */
const cases: [string, string, Record<string, string> | string[], string?][] = [
  ["POST", ALL, auth, premium],
  ["POST", `${ALL}?flagConfigEtag=stale`, auth, premium],
  ["POST", ALL, { authorization: `Bearer ${KEY}`, "x-team": "a" }, ""],
  ["POST", `${ALL}/checkout`, auth, premium],
  ["POST", `${ALL}/checkout`, { ...auth, "content-type": "text/plain" }, "{}"],
  ["POST", `${ALL}/team%2Fbanner`, { ...auth, "x-team": "a" }, "{}"],
  ["POST", `${ALL}/split`, auth, "{}"], // no targeting key: an evaluation error
  ["POST", `${ALL}/nope`, auth, "{}"],
  ["POST", `${ALL}/checkout`, auth, "{not json"],
  ["POST", `${ALL}/checkout`, auth, JSON.stringify({ context: { targetingKey: 42 } })],
  ["POST", ALL, auth, JSON.stringify({ context: "no" })],
  ["POST", ALL, {}, premium],
  ["POST", `${ALL}/checkout`, { "x-api-key": "wrong-key-0123456789" }, premium],
  ["POST", ALL, { ...auth, "x-flagserve-session": "bad session" }, premium],
  ["POST", ALL, { ...auth, "x-flagserve-session": "compare" }, premium],
  ["POST", `${ALL}/checkout`, { ...auth, "x-flagserve-session": "compare" }, premium],
  ["GET", ALL, auth],
  ["OPTIONS", ALL, { origin: "http://app.example", "access-control-request-method": "POST" }],
  ["POST", `${ALL}/checkout`, { ...auth, "X-Service-SDK": "raw-case/1.0", "X-Flipswitch-Runtime": "node/20" }, premium],
  // Header names in any case, and repeated: joined with ", " as h3 reads them ("k, k" is no key,
  // nor two Authorization values, though Node's own header object would keep the first).
  ["POST", `${ALL}/checkout`, ["X-API-KEY", KEY, "X-Team", "a"], premium],
  ["POST", `${ALL}/checkout`, ["x-api-key", KEY, "X-Api-Key", KEY], premium],
  ["POST", `${ALL}/checkout`, ["Authorization", `Bearer ${KEY}`, "authorization", "Bearer wrong-key-0123456789"], premium],
  ["POST", ALL, ["x-api-key", KEY, "x-team", "a", "X-Team", "b"], premium],
];

/** Answers to every case, plus a revalidation with the ETag the first one got. */
async function answers(): Promise<Answer[]> {
  const all: Answer[] = [];
  for (const [method, path, headers, body] of cases) all.push(await send(method, path, headers, body));
  const etag = all[0]!.headers.etag as string;
  all.push(await send("POST", ALL, { ...auth, "if-none-match": etag }, premium));
  all.push(await send("POST", ALL, { ...auth, "if-none-match": `W/${etag}, "other"` }, premium));
  all.push(await send("POST", ALL, ["x-api-key", KEY, "If-None-Match", '"other"', "if-none-match", etag], premium));
  return all;
}

const metricLines = async (): Promise<Map<string, number>> => {
  const text = await (await fetch(`${current.url}/metrics`)).text();
  const lines = text.split("\n").filter((line) => /^flagserve_(http|evaluations|client)/.test(line));
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(" ")), Number(line.slice(line.lastIndexOf(" ") + 1))]));
};

const delta = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries([...after].map(([series, n]) => [series, n - (before.get(series) ?? 0)]).filter(([, n]) => n !== 0));

describe("the Node fast path", () => {
  it("answers every kind of request as h3 does, with the same counts and session entries", async () => {
    const m0 = await metricLines();
    const fast = await answers();
    const m1 = await metricLines();
    const fastSession = server.session("compare").evaluations.map(({ at: _at, ...entry }) => entry);
    server.clearSession("compare");

    const [h3, h3Counts, h3Session] = await viaH3(async () => {
      const before = await metricLines();
      const answered = await answers();
      const counts = delta(before, await metricLines());
      const session = h3Server.session("compare").evaluations.map(({ at: _at, ...entry }) => entry);
      h3Server.clearSession("compare");
      return [answered, counts, session] as const;
    });
    expect(fast).toEqual(h3);
    expect(delta(m0, m1)).toEqual(h3Counts);
    expect(h3Session).toEqual(fastSession);
    // The answers are what they should be, not merely alike.
    expect(fast.map((a) => a.status)).toEqual([
      200, 200, 200, 200, 200, 200, 400, 404, 400, 400, 400, 401, 401, 400, 200, 200, 405, 204, 200, 200, 401, 401, 200, 304, 304, 304,
    ]);
    // Client identification headers are counted whatever the case of their names.
    expect(delta(m0, m1)).toMatchObject({
      'flagserve_client_requests_total{header="x-service-sdk",value="raw-case/1.0"}': 1,
      'flagserve_client_requests_total{header="x-flipswitch-runtime",value="node/20"}': 1,
    });
    expect(JSON.parse(fast[5]!.body)).toMatchObject({ key: "team/banner", value: "red" });
    expect(fast[0]!.headers).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "etag",
      "cache-control": "private, no-cache",
      "content-type": "application/json",
    });
    expect(fastSession).toHaveLength(4); // three flags of the evaluate-all, then the single flag
    expect(JSON.parse(fast[6]!.body)).toMatchObject({ key: "split", errorCode: "TARGETING_KEY_MISSING" });
  });

  it("answers a repeated request from the reply memoized with its answer, as it answered the first time", async () => {
    const runs: Answer[][] = [];
    const counts: Record<string, number>[] = [];
    for (let run = 0; run < 3; run++) {
      const before = await metricLines();
      runs.push(await answers());
      counts.push(delta(before, await metricLines()));
    }
    server.clearSession("compare");
    // The first run computed the answers, the second memoized their replies, the third sent the memoized ones.
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).toEqual(runs[0]);
    expect(counts[1]).toEqual(counts[0]);
    expect(counts[2]).toEqual(counts[0]);
    expect(runs[2]![3]!.headers["content-length"]).toBe(String(Buffer.byteLength(runs[2]![3]!.body)));
  });

  it("reads a body sent in pieces, and a body cut off by the client gets no answer and counts as no error", async () => {
    const url = new URL(server.url);
    const inPieces = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: "POST",
          path: `${ALL}/checkout`,
          headers: { ...auth, "transfer-encoding": "chunked" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        },
      );
      req.on("error", reject);
      req.write(premium.slice(0, 10));
      setTimeout(() => req.end(premium.slice(10)), 20);
    });
    expect(inPieces.status).toBe(200);
    expect(JSON.parse(inPieces.body)).toMatchObject({ key: "checkout", value: true });

    const before = await metricLines();
    const cutOff = await new Promise<string>((resolve) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, method: "POST", path: `${ALL}/checkout`, headers: { ...auth, "content-length": "100" } },
        () => resolve("answered"),
      );
      req.on("error", () => resolve("no answer"));
      req.write('{"context":', () => setTimeout(() => req.destroy(), 20));
    });
    expect(cutOff).toBe("no answer");
    // The server is still up and answering, and the client's leaving is not a server error.
    expect((await send("POST", `${ALL}/checkout`, auth, premium)).status).toBe(200);
    const counted = delta(before, await metricLines());
    expect(
      Object.keys(counted).filter((series) => series.startsWith("flagserve_http_errors_total") || series.includes('status="500"')),
    ).toEqual([]);
    expect(counted).toMatchObject({ 'flagserve_http_responses_total{route="/ofrep/v1/evaluate/flags/:key",status="200"}': 1 });
  });
});
