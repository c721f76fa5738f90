/** The real OpenFeature clients against the real CLI process. */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature as ServerOpenFeature } from "@openfeature/server-sdk";
import { OpenFeature as WebOpenFeature } from "@openfeature/web-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { OFREP_FIXTURE, TEST_KEY } from "../helpers/fixtures.js";

let dir: TempDir;
let cli: CliProcess;
let baseUrl: string;

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/test.yaml", OFREP_FIXTURE);
  ({ cli, url: baseUrl } = await startCli([dir.file("flags")]));
});

afterAll(async () => {
  await ServerOpenFeature.close();
  await WebOpenFeature.close();
  await cli?.stop();
});

describe("@openfeature/server-sdk + @openfeature/ofrep-provider", () => {
  beforeAll(async () => {
    await ServerOpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl, headers: [["X-API-Key", TEST_KEY]] }));
  });

  it("resolves boolean, string, number and object flags with reasons and variants", async () => {
    const client = ServerOpenFeature.getClient();
    const ctx = { targetingKey: "u1" };
    expect(await client.getBooleanDetails("bool-flag", false, ctx)).toMatchObject({ value: true, variant: "on", reason: "STATIC" });
    expect(await client.getStringDetails("string-flag", "x", ctx)).toMatchObject({ value: "blue", variant: "blue", reason: "STATIC" });
    expect(await client.getNumberDetails("int-flag", 0, ctx)).toMatchObject({ value: 42, variant: "answer" });
    expect(await client.getNumberDetails("float-flag", 0, ctx)).toMatchObject({ value: 3.14, variant: "pi" });
    expect(await client.getObjectDetails("object-flag", {}, ctx)).toMatchObject({ value: { a: 1, b: { c: true } }, reason: "STATIC" });
  });

  it("evaluates targeting on the caller's context", async () => {
    const client = ServerOpenFeature.getClient();
    expect(await client.getBooleanDetails("targeted-flag", false, { targetingKey: "u1", plan: "premium" })).toMatchObject({
      value: true,
      variant: "vip",
      reason: "TARGETING_MATCH",
    });
    expect(await client.getBooleanDetails("targeted-flag", true, { targetingKey: "u1", plan: "free" })).toMatchObject({
      value: false,
      reason: "DEFAULT",
    });
    expect(await client.getStringDetails("split-flag", "z", { targetingKey: "user-7" })).toMatchObject({ reason: "SPLIT" });
  });

  it("falls back to the code default for DISABLED and code-default flags", async () => {
    const client = ServerOpenFeature.getClient();
    // ofrep-provider 0.1.3 (the newest on npm) predates code-default support (OFREP ADR-0006):
    // a success without `value` reaches the caller as the code default with a GENERAL error.
    const disabled = await client.getBooleanDetails("disabled-flag", false, {});
    const codeDefault = await client.getBooleanDetails("default-flag", true, {});
    expect(disabled).toMatchObject({ value: false, reason: "ERROR", errorCode: "GENERAL" });
    expect(codeDefault).toMatchObject({ value: true, reason: "ERROR", errorCode: "GENERAL" });
  });

  it("surfaces the server's error codes", async () => {
    const client = ServerOpenFeature.getClient();
    expect(await client.getBooleanDetails("missing", false, { targetingKey: "u1" })).toMatchObject({
      value: false,
      reason: "ERROR",
      errorCode: "FLAG_NOT_FOUND",
    });
    expect(await client.getStringDetails("split-flag", "fallback", {})).toMatchObject({
      value: "fallback",
      reason: "ERROR",
      errorCode: "TARGETING_KEY_MISSING",
    });
    expect(await client.getStringDetails("bool-flag", "x", {})).toMatchObject({ value: "x", errorCode: "TYPE_MISMATCH" });
    expect(await client.getBooleanDetails("meta-flag", false, {})).toMatchObject({
      value: true,
      flagMetadata: { team: "ecommerce", version: 4, beta: true, flagSetId: "fixture" },
    });
  });
});

describe("@openfeature/web-sdk + @openfeature/ofrep-web-provider", () => {
  it("initialises from the bulk endpoint and gets 304 on refresh", async () => {
    const statuses: number[] = [];
    // The real fetch, observed: the provider decides what to send, we only record the answers.
    const observedFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      return res;
    };
    await WebOpenFeature.setContext({ targetingKey: "u1", plan: "premium" });
    await WebOpenFeature.setProviderAndWait(
      new OFREPWebProvider({
        baseUrl,
        headers: [["X-API-Key", TEST_KEY]],
        cacheMode: "disabled",
        changeDetection: "none",
        fetchImplementation: observedFetch,
      }),
    );
    const client = WebOpenFeature.getClient();
    expect(client.getBooleanDetails("targeted-flag", false)).toMatchObject({ value: true, variant: "vip", reason: "TARGETING_MATCH" });
    expect(client.getStringValue("string-flag", "x")).toBe("blue");
    expect(client.getNumberValue("int-flag", 0)).toBe(42);
    expect(client.getBooleanDetails("disabled-flag", true)).toMatchObject({ value: true, reason: "DISABLED" });
    expect(client.getBooleanDetails("default-flag", true)).toMatchObject({ value: true, reason: "DEFAULT" });
    expect(statuses).toEqual([200]);

    // Same targeting key: the provider keeps its ETag and revalidates; nothing changed, so 304.
    await WebOpenFeature.setContext({ targetingKey: "u1", plan: "premium" });
    expect(statuses).toEqual([200, 304]);
    expect(client.getBooleanValue("targeted-flag", false)).toBe(true);

    // A context change that changes a result must not be answered from the old ETag.
    await WebOpenFeature.setContext({ targetingKey: "u1", plan: "free" });
    expect(statuses).toEqual([200, 304, 200]);
    expect(client.getBooleanDetails("targeted-flag", true)).toMatchObject({ value: false, reason: "DEFAULT" });
  });
});
