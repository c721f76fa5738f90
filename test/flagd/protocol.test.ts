/**
 * The flagd port at the protocol level, with a plain gRPC client: what the JS provider never
 * calls (evaluation v1, ResolveInt, ResolveAll, FetchAllFlags, GetMetadata) and what it cannot
 * send (metadata of its own, oversized or malformed messages, selection by name). The client is
 * built from the same .proto files the server reads; the provider's own generated code checks
 * them against flagd's in flagd-provider.test.ts.
 */
import { credentials, Metadata, status, type Client, type ServiceError } from "@grpc/grpc-js";
import { makeClientConstructor } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { flagdServices, fromStruct, toStruct } from "../../src/flagd/protocol.js";

const KEY = "flagd-protocol-key-0123456789";
let server: FlagServer;
let clients: { v1: Client; v2: Client; sync: Client };

type Unary = (
  request: unknown,
  metadata: Metadata,
  callback: (error: ServiceError | null, response: Record<string, unknown>) => void,
) => void;

/** One unary call: its response, or its error. */
function call(client: Client, method: string, request: unknown, metadata: Record<string, string> = { "flagd-selector": KEY }) {
  const meta = new Metadata();
  for (const [name, value] of Object.entries(metadata)) meta.set(name, value);
  return new Promise<{ response?: Record<string, unknown>; error?: ServiceError }>((resolve) => {
    (client as unknown as Record<string, Unary>)[method]!.call(client, request, meta, (error, response) =>
      resolve(error ? { error } : { response }),
    );
  });
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
  const { evaluation, sync } = flagdServices();
  const address = `127.0.0.1:${server.flagdPort}`;
  const make = (service: typeof sync) => new (makeClientConstructor(service, "flagd"))(address, credentials.createInsecure());
  clients = { v1: make(evaluation.v1), v2: make(evaluation.v2), sync: make(sync) };
});

afterAll(async () => {
  for (const client of Object.values(clients ?? {})) client.close();
  await server?.close();
});

describe("evaluation service", () => {
  it("v1 and v2 answer alike; v2 leaves the value and variant unset for a disabled flag", async () => {
    for (const client of [clients.v1, clients.v2]) {
      expect((await call(client, "ResolveBoolean", { flagKey: "bool-flag" })).response).toMatchObject({
        value: true,
        reason: "STATIC",
        variant: "on",
      });
    }
    const v2 = (await call(clients.v2, "ResolveBoolean", { flagKey: "disabled-flag" })).response!;
    expect(v2).toMatchObject({ reason: "DISABLED" });
    expect(v2.value).toBeUndefined();
    expect(v2.variant).toBeUndefined();
  });

  it("ResolveInt answers integers and refuses others as TYPE_MISMATCH (INVALID_ARGUMENT)", async () => {
    expect((await call(clients.v2, "ResolveInt", { flagKey: "int-flag" })).response).toMatchObject({ value: 42, variant: "answer" });
    const { error } = await call(clients.v2, "ResolveInt", { flagKey: "float-flag" });
    expect(error).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining("TYPE_MISMATCH") });
    expect((await call(clients.v2, "ResolveFloat", { flagKey: "float-flag" })).response).toMatchObject({ value: 3.14 });
  });

  it("ResolveAll answers every flag of the environment", async () => {
    const { response } = await call(clients.v2, "ResolveAll", { context: toStruct({ targetingKey: "u" }) });
    const flags = response!.flags as Record<string, Record<string, unknown>>;
    expect(Object.keys(flags).sort()).toEqual(["bool-flag", "disabled-flag", "float-flag", "int-flag", "plan-flag", "shard-flag"]);
    expect(flags["int-flag"]).toMatchObject({ doubleValue: 42, reason: "STATIC", variant: "answer" });
    expect(flags["bool-flag"]).toMatchObject({ boolValue: true });
    expect(flags["disabled-flag"]).toMatchObject({ reason: "DISABLED" });
  });

  it("adds the static context values and the mapped metadata to the context, as the HTTP routes do", async () => {
    expect((await call(clients.v2, "ResolveString", { flagKey: "shard-flag" })).response).toMatchObject({
      value: "b",
      reason: "TARGETING_MATCH",
    });
    const withPlan = await call(clients.v2, "ResolveString", { flagKey: "plan-flag" }, { "flagd-selector": KEY, "x-user-plan": "paid" });
    expect(withPlan.response).toMatchObject({ value: "paid" });
  });

  it("records the evaluations of a session named in the metadata, and counts them", async () => {
    const session = "flagd-session-1";
    await call(
      clients.v2,
      "ResolveBoolean",
      { flagKey: "bool-flag", context: toStruct({ targetingKey: "rec" }) },
      { "flagd-selector": KEY, "x-flagserve-session": session },
    );
    expect(server.session(session).evaluations).toMatchObject([{ flagKey: "bool-flag", variant: "on", reason: "STATIC" }]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^flagserve_flagd_calls_total\{method="ResolveBoolean",code="OK"\} \d+$/m);
    expect(metrics).toMatch(/^flagserve_evaluations_total\{environment="test",flag="bool-flag",variant="on",reason="STATIC"\} \d+$/m);
  });

  it("answers bad input with flagd's codes and stays up: unknown flag, oversized context, a malformed message", async () => {
    expect((await call(clients.v2, "ResolveBoolean", { flagKey: "nope" })).error).toMatchObject({ code: status.NOT_FOUND });
    const huge = toStruct({ targetingKey: "u", blob: "x".repeat(2 * 1024 * 1024) });
    expect((await call(clients.v2, "ResolveBoolean", { flagKey: "bool-flag", context: huge })).error).toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
    });
    // Bytes that are no ResolveBooleanRequest (a field 1 of wire type 7, which does not exist).
    const raw = new (makeClientConstructor(
      { ResolveBoolean: { ...flagdServices().evaluation.v2.ResolveBoolean!, requestSerialize: () => Buffer.from([0x0f, 0xff, 0xff]) } },
      "raw",
    ))(`127.0.0.1:${server.flagdPort}`, credentials.createInsecure());
    const malformed = await call(raw, "ResolveBoolean", {});
    raw.close();
    expect(malformed.error?.code).toBe(status.INTERNAL);
    expect((await call(clients.v2, "ResolveBoolean", { flagKey: "bool-flag" })).response).toMatchObject({ value: true });
  });

  it("selects by name only the environments opted in", async () => {
    expect((await call(clients.v2, "ResolveBoolean", { flagKey: "bool-flag" }, { "flagd-selector": "named" })).response).toMatchObject({
      value: false,
    });
    const refused = await call(clients.v2, "ResolveBoolean", { flagKey: "bool-flag" }, { "flagd-selector": "secret" });
    expect(refused.error).toMatchObject({ code: status.UNAUTHENTICATED, details: expect.stringContaining("API key") });
    const secretKey = server.keys.secret!;
    expect((await call(clients.v2, "ResolveBoolean", { flagKey: "bool-flag" }, { "flagd-selector": secretKey })).response).toMatchObject({
      value: true,
    });
  });
});

describe("sync service", () => {
  it("FetchAllFlags answers the flag set as flagd's JSON, selected by the request's selector", async () => {
    const { response } = await call(clients.sync, "FetchAllFlags", { selector: KEY }, {});
    const set = JSON.parse(response!.flagConfiguration as string) as { flags: Record<string, unknown> };
    expect(Object.keys(set.flags)).toContain("plan-flag");
    expect(set.flags["disabled-flag"]).toMatchObject({ state: "DISABLED", variants: { on: true }, defaultVariant: "on" });
    expect((await call(clients.sync, "FetchAllFlags", {}, {})).error).toMatchObject({ code: status.UNAUTHENTICATED });
  });

  it("GetMetadata and the sync stream carry the static context values, for in-process providers to add", async () => {
    expect(fromStruct((await call(clients.sync, "GetMetadata", {}, {})).response!.metadata as never)).toEqual({ shard: "3" });
    const stream = (clients.sync as unknown as { SyncFlags(request: unknown): NodeJS.EventEmitter & { cancel(): void } }).SyncFlags({
      selector: KEY,
    });
    const first = await new Promise<Record<string, unknown>>((resolve) => stream.once("data", resolve));
    stream.on("error", () => undefined);
    stream.cancel();
    expect(fromStruct(first.syncContext as never)).toEqual({ shard: "3" });
    expect(JSON.parse(first.flagConfiguration as string).flags["shard-flag"].targeting).toEqual({
      if: [{ "==": [{ var: "shard" }, "3"] }, "b", null],
    });
  });
});
