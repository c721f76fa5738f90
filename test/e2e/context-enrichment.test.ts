/**
 * --context-value and --context-from-header with the real OpenFeature server SDK and OFREP
 * provider: targeting sees what flagd would give it (string values; header over static value over
 * the request's own context; empty or absent headers add nothing).
 */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, EnrichmentError, type EnvironmentInput, type FlagServer } from "../../src/index.js";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";

const KEY = "enrich-key-0123456789";

/** Each flag answers what targeting saw, so a test reads the context back through the client. */
const FLAGS_YAML = `apiKey: ${KEY}
flags:
  plan-seen:
    variants: { free: free, premium: premium, gold: gold, none: none }
    defaultVariant: none
    targeting:
      if:
        - { "==": [{ var: plan }, gold] }
        - gold
        - { "==": [{ var: plan }, premium] }
        - premium
        - { "==": [{ var: plan }, free] }
        - free
        - null
  shard-is-string:
    variants: { "yes": true, "no": false }
    defaultVariant: "no"
    targeting:
      if: [{ "===": [{ var: shard }, "3"] }, "yes", null]
  shard-is-number:
    variants: { "yes": true, "no": false }
    defaultVariant: "no"
    targeting:
      if: [{ "===": [{ var: shard }, 3] }, "yes", null]
  user-seen:
    variants: { u42: u42, other: other }
    defaultVariant: other
    targeting:
      if: [{ "==": [{ var: targetingKey }, u-42] }, u42, null]
`;

const clients = (baseUrl: string, headers: [string, string][] = []) => {
  const domain = `d${Math.random()}`;
  OpenFeature.setProvider(domain, new OFREPProvider({ baseUrl, headers: [["X-API-Key", KEY], ...headers] }));
  return OpenFeature.getClient(domain);
};

afterAll(() => OpenFeature.close());

describe("flagserve serve --context-value / --context-from-header", () => {
  let dir: TempDir;
  let cli: CliProcess;
  let url: string;

  beforeAll(async () => {
    dir = await tempDir();
    await dir.write("flags/ci.yaml", FLAGS_YAML);
    ({ cli, url } = await startCli([
      dir.file("flags"),
      "--state-dir",
      dir.file("state"),
      "--context-value",
      "plan=premium",
      "-q",
      "--context-value",
      "shard=3",
      "--context-from-header",
      "X-Plan=plan",
      "--context-from-header",
      "x-user-id=targetingKey",
    ]));
  });
  afterAll(async () => {
    await cli?.stop();
  });

  it("adds the static values as strings, over the request's own context", async () => {
    const client = clients(url);
    // Without the header, the static plan wins over what the app sent.
    expect(await client.getStringDetails("plan-seen", "?", { targetingKey: "u1", plan: "free" })).toMatchObject({
      value: "premium",
      reason: "TARGETING_MATCH",
    });
    expect(await client.getStringValue("plan-seen", "?", {})).toBe("premium");
    // flagd keeps -X values as strings: "3", never the number 3.
    expect(await client.getBooleanValue("shard-is-string", false, { shard: 3 })).toBe(true);
    expect(await client.getBooleanValue("shard-is-number", true, { shard: 3 })).toBe(false);
  });

  it("copies headers (any case) over both the static values and the request's context", async () => {
    const gold = clients(url, [
      ["x-PLAN", "gold"],
      ["X-User-Id", "u-42"],
    ]);
    expect(await gold.getStringValue("plan-seen", "?", { targetingKey: "u1", plan: "free" })).toBe("gold");
    expect(await gold.getStringDetails("user-seen", "?", { targetingKey: "someone-else" })).toMatchObject({
      value: "u42",
      reason: "TARGETING_MATCH",
    });
  });

  it("ignores an empty header, as flagd does: the static value stays", async () => {
    const empty = clients(url, [["X-Plan", ""]]);
    expect(await empty.getStringValue("plan-seen", "?", { plan: "free" })).toBe("premium");
  });

  it("overrides a value the app sent in context.properties too (the attributes targeting sees)", async () => {
    const response = await fetch(`${url}/ofrep/v1/evaluate/flags/plan-seen`, {
      method: "POST",
      headers: { "x-api-key": KEY },
      body: JSON.stringify({ context: { targetingKey: "u1", properties: { plan: "free" } } }),
    });
    expect(await response.json()).toMatchObject({ key: "plan-seen", value: "premium", reason: "TARGETING_MATCH" });
  });

  it("never answers one header value with another's cached answer (same body, both endpoints)", async () => {
    const body = JSON.stringify({ context: { targetingKey: "same-body" } });
    const ask = async (path: string, plan?: string) => {
      const response = await fetch(`${url}/ofrep/v1/evaluate/flags${path}`, {
        method: "POST",
        headers: { "x-api-key": KEY, ...(plan !== undefined && { "x-plan": plan }) },
        body,
      });
      const json = (await response.json()) as { value?: unknown; flags?: { key: string; value: unknown }[] };
      return json.flags ? json.flags.find((f) => f.key === "plan-seen")!.value : json.value;
    };
    for (const path of ["/plan-seen", ""]) {
      expect([await ask(path, "gold"), await ask(path, "free"), await ask(path), await ask(path, "gold"), await ask(path, "")]).toEqual([
        "gold",
        "free",
        "premium",
        "gold",
        "premium",
      ]);
    }
  });

  it("applies to evaluate-all the same way", async () => {
    const response = await fetch(`${url}/ofrep/v1/evaluate/flags`, {
      method: "POST",
      headers: { "x-api-key": KEY, "x-plan": "gold" },
      body: JSON.stringify({ context: { plan: "free", shard: 3 } }),
    });
    const { flags } = (await response.json()) as { flags: { key: string; value: unknown }[] };
    expect(Object.fromEntries(flags.map((f) => [f.key, f.value]))).toEqual({
      "plan-seen": "gold",
      "shard-is-number": false,
      "shard-is-string": true,
      "user-seen": "other",
    });
  });
});

describe("createFlagServer({ contextValues, contextFromHeaders })", () => {
  const flags: EnvironmentInput = {
    apiKey: KEY,
    flags: {
      "region-seen": {
        variants: { eu: "eu", us: "us", none: "none" },
        defaultVariant: "none",
        targeting: { if: [{ "==": [{ var: "region" }, "eu"] }, "eu", { "==": [{ var: "region" }, "us"] }, "us", null] },
      },
    },
  };
  let server: FlagServer;
  beforeAll(async () => {
    server = await createFlagServer({
      config: { environments: { ci: flags } },
      contextValues: { region: "eu" },
      contextFromHeaders: { "X-Region": "region" },
    });
  });
  afterAll(() => server?.close());

  it("follows the same precedence: header > static value > request context", async () => {
    expect(await clients(server.url).getStringValue("region-seen", "?", { region: "us" })).toBe("eu");
    expect(await clients(server.url, [["X-Region", "us"]]).getStringValue("region-seen", "?", { region: "eu" })).toBe("us");
  });

  it("rejects options flagd could not express", async () => {
    const config = { environments: { ci: flags } };
    await expect(createFlagServer({ config, contextValues: { region: 1 as unknown as string } })).rejects.toThrow(EnrichmentError);
    await expect(createFlagServer({ config, contextFromHeaders: { "Bad Header": "x" } })).rejects.toThrow(
      /'Bad Header' is not a header name/,
    );
    await expect(createFlagServer({ config, contextValues: { "": "x" } })).rejects.toThrow(/the context key is empty/);
  });
});
