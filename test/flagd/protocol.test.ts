/**
 * The flagd port at the protocol level, through each of its doors (gRPC, gRPC-Web, Connect JSON
 * and binary, HTTP/1.1 and HTTP/2): what the JS providers never call (evaluation v1, ResolveInt,
 * ResolveAll over gRPC, FetchAllFlags, GetMetadata) and what they cannot send (headers of their
 * own, oversized or malformed messages, selection by name). Every door answers alike: the same
 * calls, the same answers, the same statuses. The clients use the code generated from proto/;
 * the providers' own generated code checks it against flagd's in flagd-provider.test.ts and
 * flagd-web.test.ts.
 */
import { request as httpRequest } from "node:http";
import { connect as connectHttp2, constants as http2Constants } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { ResolveBooleanRequestSchema } from "../../src/flagd/generated/flagd/evaluation/v2/evaluation_pb.js";
import { encodeGrpcMessage } from "../../src/flagd/server.js";
import { DOORS, flagdClients, withSelector, type FlagdClients } from "../helpers/flagd.js";

const KEY = "flagd-protocol-key-0123456789";
let server: FlagServer;

/** The error a call failed with (a ConnectError: code and raw message), or fails the test. */
async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

beforeAll(async () => {
  server = await createFlagServer({
    config: {
      environments: {
        test: {
          apiKey: KEY,
          flags: {
            "bool-flag": { variants: { on: true, off: false }, defaultVariant: "on" },
            "int-flag": { variants: { answer: 42 }, defaultVariant: "answer" },
            "float-flag": { variants: { pi: 3.14 }, defaultVariant: "pi" },
            "object-flag": { variants: { nested: { a: 1, b: [true, null] } }, defaultVariant: "nested" },
            "disabled-flag": { state: "DISABLED", variants: { on: true }, defaultVariant: "on" },
            "shard-flag": {
              variants: { a: "a", b: "b" },
              defaultVariant: "a",
              targeting: { if: [{ "==": [{ var: "shard" }, "3"] }, "b", null] },
            },
            "plan-flag": {
              variants: { free: "free", paid: "paid" },
              defaultVariant: "free",
              targeting: { if: [{ "==": [{ var: "plan" }, "paid"] }, "paid", null] },
            },
          },
        },
        named: { flags: { "bool-flag": { variants: { on: true, off: false }, defaultVariant: "off" } } },
        secret: { flags: { "bool-flag": { variants: { on: true }, defaultVariant: "on" } } },
      },
    },
    flagdPort: 0,
    flagdSelectorByName: ["named"],
    contextValues: { shard: "3" },
    contextFromHeaders: { "x-user-plan": "plan" },
  });
});

afterAll(async () => {
  await server?.close();
});

describe.each(DOORS)("through %s", (door) => {
  let clients: FlagdClients;
  beforeAll(() => {
    clients = flagdClients(door, server.flagdPort!);
  });
  const keyed = withSelector(KEY);

  it("v1 and v2 answer alike; v2 leaves the value and variant unset for a disabled flag", async () => {
    for (const client of [clients.v1, clients.v2]) {
      expect(await client.resolveBoolean({ flagKey: "bool-flag" }, keyed)).toMatchObject({ value: true, reason: "STATIC", variant: "on" });
    }
    const v2 = await clients.v2.resolveBoolean({ flagKey: "disabled-flag" }, keyed);
    expect(v2).toMatchObject({ reason: "DISABLED" });
    expect(v2.value).toBeUndefined();
    expect(v2.variant).toBeUndefined();
  });

  it("ResolveInt answers integers and refuses others as TYPE_MISMATCH (INVALID_ARGUMENT); objects keep their shape", async () => {
    expect(await clients.v2.resolveInt({ flagKey: "int-flag" }, keyed)).toMatchObject({ value: 42n, variant: "answer" });
    const mismatch = await failure(clients.v2.resolveInt({ flagKey: "float-flag" }, keyed));
    expect(mismatch.code).toBe(Code.InvalidArgument);
    expect(mismatch.rawMessage).toMatch(/^TYPE_MISMATCH: flag 'float-flag' is not a int flag/);
    expect(await clients.v2.resolveFloat({ flagKey: "float-flag" }, keyed)).toMatchObject({ value: 3.14 });
    expect(await clients.v1.resolveObject({ flagKey: "object-flag" }, keyed)).toMatchObject({ value: { a: 1, b: [true, null] } });
  });

  it("ResolveAll answers every flag of the environment", async () => {
    const { flags } = await clients.v2.resolveAll({ context: { targetingKey: "u" } }, keyed);
    expect(Object.keys(flags).sort()).toEqual([
      "bool-flag",
      "disabled-flag",
      "float-flag",
      "int-flag",
      "object-flag",
      "plan-flag",
      "shard-flag",
    ]);
    expect(flags["int-flag"]).toMatchObject({ value: { case: "doubleValue", value: 42 }, reason: "STATIC", variant: "answer" });
    expect(flags["bool-flag"]).toMatchObject({ value: { case: "boolValue", value: true } });
    expect(flags["object-flag"]).toMatchObject({ value: { case: "objectValue", value: { a: 1, b: [true, null] } } });
    expect(flags["disabled-flag"]).toMatchObject({ reason: "DISABLED", value: { case: undefined } });
  });

  it("adds the static context values and the mapped headers to the context, as the HTTP routes do", async () => {
    expect(await clients.v2.resolveString({ flagKey: "shard-flag" }, keyed)).toMatchObject({ value: "b", reason: "TARGETING_MATCH" });
    const withPlan = await clients.v2.resolveString({ flagKey: "plan-flag" }, withSelector(KEY, { "x-user-plan": "paid" }));
    expect(withPlan).toMatchObject({ value: "paid" });
  });

  it("records the evaluations of a session named in a header, and counts them", async () => {
    const session = `flagd-session-${DOORS.indexOf(door)}`;
    await clients.v2.resolveBoolean(
      { flagKey: "bool-flag", context: { targetingKey: "rec" } },
      withSelector(KEY, { "x-flagserve-session": session }),
    );
    expect(server.session(session).evaluations).toMatchObject([{ flagKey: "bool-flag", variant: "on", reason: "STATIC" }]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^flagserve_flagd_calls_total\{method="ResolveBoolean",code="OK"\} \d+$/m);
    expect(metrics).toMatch(/^flagserve_flagd_calls_total\{method="ResolveInt",code="INVALID_ARGUMENT"\} \d+$/m);
    expect(metrics).toMatch(/^flagserve_evaluations_total\{environment="test",flag="bool-flag",variant="on",reason="STATIC"\} \d+$/m);
  });

  it("answers bad input with flagd's codes and stays up: unknown flag, oversized context", async () => {
    expect((await failure(clients.v2.resolveBoolean({ flagKey: "nope" }, keyed))).code).toBe(Code.NotFound);
    const huge = { targetingKey: "u", blob: "x".repeat(2 * 1024 * 1024) };
    expect((await failure(clients.v2.resolveBoolean({ flagKey: "bool-flag", context: huge }, keyed))).code).toBe(Code.ResourceExhausted);
    expect(await clients.v2.resolveBoolean({ flagKey: "bool-flag" }, keyed)).toMatchObject({ value: true });
  });

  it("selects by key, and by name only the environments opted in; no selector, no flags", async () => {
    expect(await clients.v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector("named"))).toMatchObject({ value: false });
    const refused = await failure(clients.v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector("secret")));
    expect(refused.code).toBe(Code.Unauthenticated);
    expect(refused.rawMessage).toBe(
      "the selector matches no environment: set the provider's selector to the environment's API key (flagd-selector)",
    );
    expect(await clients.v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector(server.keys.secret!))).toMatchObject({ value: true });
    const none = await failure(clients.v2.resolveAll({}));
    expect(none.code).toBe(Code.Unauthenticated);
    expect(none.rawMessage).toMatch(/^no selector: /);
  });

  it("fault rules on flagd-evaluate answer the status they name", async () => {
    server.setFaults([{ route: "flagd-evaluate", environment: "test", ratio: 1, status: 503 }]);
    try {
      const fault = await failure(clients.v2.resolveBoolean({ flagKey: "bool-flag" }, keyed));
      expect(fault.code).toBe(Code.Unavailable);
      expect(fault.rawMessage).toBe("injected fault: 503 on flagd-evaluate");
    } finally {
      server.setFaults([]);
    }
  });

  it("FetchAllFlags answers the flag set as flagd's JSON, selected by the request's selector or the header", async () => {
    const { flagConfiguration } = await clients.sync.fetchAllFlags({ selector: KEY });
    const set = JSON.parse(flagConfiguration) as { flags: Record<string, unknown> };
    expect(Object.keys(set.flags)).toContain("plan-flag");
    expect(set.flags["disabled-flag"]).toMatchObject({ state: "DISABLED", variants: { on: true }, defaultVariant: "on" });
    expect((await clients.sync.fetchAllFlags({}, keyed)).flagConfiguration).toBe(flagConfiguration);
    expect((await failure(clients.sync.fetchAllFlags({}))).code).toBe(Code.Unauthenticated);
  });

  it("GetMetadata and the sync stream carry the static context values, for in-process providers to add", async () => {
    expect((await clients.sync.getMetadata({})).metadata).toEqual({ shard: "3" });
    const abort = new AbortController();
    const stream = clients.sync.syncFlags({ selector: KEY }, { signal: abort.signal });
    const first = (await stream[Symbol.asyncIterator]().next()).value!;
    abort.abort();
    expect(first.syncContext).toEqual({ shard: "3" });
    expect(JSON.parse(first.flagConfiguration).flags["shard-flag"].targeting).toEqual({
      if: [{ "==": [{ var: "shard" }, "3"] }, "b", null],
    });
  });
});

describe("the Connect door, as curl and a browser's fetch use it", () => {
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${server.flagdPort}${path}`, {
      method: "POST",
      ...init,
      headers: { "content-type": "application/json", ...init.headers },
    });

  it("answers a plain JSON POST (ResolveAll, v1), and refuses one without a selector with a JSON error", async () => {
    const answered = await call("/flagd.evaluation.v1.Service/ResolveAll", { headers: { "flagd-selector": KEY }, body: "{}" });
    expect(answered.status).toBe(200);
    const body = (await answered.json()) as { flags: Record<string, unknown> };
    expect(body.flags["bool-flag"]).toEqual({ reason: "STATIC", variant: "on", boolValue: true, metadata: {} });
    const refused = await call("/flagd.evaluation.v1.Service/ResolveAll", { body: "{}" });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      code: "unauthenticated",
      message: "no selector: set the provider's selector to the environment's API key (flagd-selector)",
    });
  });

  it("answers a preflight from another origin, and exposes gRPC-Web's status headers to it", async () => {
    const preflight = await call("/flagd.evaluation.v1.Service/ResolveAll", {
      method: "OPTIONS",
      headers: {
        origin: "http://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,flagd-selector,x-grpc-web",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, GET");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type,connect-protocol-version,flagd-selector,x-grpc-web");
    const answered = await call("/flagd.evaluation.v1.Service/ResolveAll", {
      headers: { origin: "http://app.example", "flagd-selector": KEY },
      body: "{}",
    });
    expect(answered.headers.get("access-control-allow-origin")).toBe("*");
    expect(answered.headers.get("access-control-expose-headers")).toMatch(/^Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin/);
  });

  it("refuses an HTTP/1.1 request naming a host that is not this server's (DNS rebinding); gRPC over HTTP/2 is not a browser's", async () => {
    // What a page at http://rebound.example:PORT sends once its name resolves to 127.0.0.1 (fetch sets Host itself).
    const rebound = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `http://127.0.0.1:${server.flagdPort}/flagd.evaluation.v1.Service/ResolveAll`,
        {
          method: "POST",
          headers: { host: `rebound.example:${server.flagdPort}`, "content-type": "application/json", "flagd-selector": "named" },
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8").on("data", (c: string) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode, body }));
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/DNS rebinding/);
    // The same call by name over HTTP/2, whatever :authority it names.
    const session = connectHttp2(`http://127.0.0.1:${server.flagdPort}`);
    const request = session.request({
      ":method": "POST",
      ":path": "/flagd.evaluation.v2.Service/ResolveBoolean",
      ":authority": "flagserve.internal:8013",
      "content-type": "application/grpc",
      te: "trailers",
      "flagd-selector": "named",
    });
    const message = toBinary(ResolveBooleanRequestSchema, create(ResolveBooleanRequestSchema, { flagKey: "bool-flag" }));
    const envelope = Buffer.alloc(5 + message.length);
    envelope.writeUInt32BE(message.length, 1);
    envelope.set(message, 5);
    request.end(envelope);
    const [headers, trailers] = await Promise.all([
      new Promise<Record<string, unknown>>((resolve) => request.once("response", resolve)),
      new Promise<Record<string, unknown>>((resolve) => request.once("trailers", resolve)),
      new Promise((resolve) => request.on("data", () => undefined).once("end", resolve)),
    ]);
    session.close();
    expect(headers[http2Constants.HTTP2_HEADER_STATUS]).toBe(200);
    expect(trailers["grpc-status"]).toBe("0");
  });

  it("a configured --cors-origin is followed: that origin is allowed, another is not", async () => {
    const strict = await createFlagServer({
      config: { environments: { test: { apiKey: KEY, flags: {} } } },
      flagdPort: 0,
      corsOrigin: ["http://app.example"],
    });
    try {
      const ask = (origin: string) =>
        fetch(`http://127.0.0.1:${strict.flagdPort}/flagd.evaluation.v1.Service/ResolveAll`, {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "flagd-selector" },
        });
      const allowed = await ask("http://app.example");
      expect(allowed.headers.get("access-control-allow-origin")).toBe("http://app.example");
      expect(allowed.headers.get("vary")).toMatch(/origin/);
      expect((await ask("http://other.example")).headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await strict.close();
    }
  });
});

describe("gRPC's status message", () => {
  it("is percent-encoded as gRPC's spec says, which grpc-js (the flagd providers' client) decodes", () => {
    const message = "injected fault: 503 on flagd-evaluate (100% of calls, é)";
    const encoded = encodeGrpcMessage(message);
    expect(encoded).toBe("injected fault: 503 on flagd-evaluate (100%25 of calls, %C3%A9)");
    expect(decodeURI(encoded)).toBe(message); // what grpc-js does with it
  });

  it("a message that does not decode is INTERNAL, and the port stays up", async () => {
    const session = connectHttp2(`http://127.0.0.1:${server.flagdPort}`);
    const request = session.request({
      ":method": "POST",
      ":path": "/flagd.evaluation.v2.Service/ResolveBoolean",
      "content-type": "application/grpc",
      te: "trailers",
      "flagd-selector": KEY,
    });
    // Bytes that are no ResolveBooleanRequest (a field 1 of wire type 7, which does not exist).
    request.end(Buffer.from([0, 0, 0, 0, 3, 0x0f, 0xff, 0xff]));
    const status = await new Promise<Record<string, unknown>>((resolve) => {
      request.once("response", (headers) => headers["grpc-status"] !== undefined && resolve(headers));
      request.once("trailers", resolve);
      request.resume();
    });
    session.close();
    expect(Number(status["grpc-status"])).toBe(Code.Internal);
    const clients = flagdClients("gRPC", server.flagdPort!);
    expect(await clients.v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector(KEY))).toMatchObject({ value: true });
  });
});
