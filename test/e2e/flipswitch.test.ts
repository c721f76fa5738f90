/**
 * The real Flipswitch server SDK (vendored in test/fixtures, see its README) against the real
 * CLI: OFREP evaluation, its /api/v1/flags/events stream, and a key rotation during which the
 * app moves to the new key before the old one is revoked.
 */
import { writeFile } from "node:fs/promises";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { FlipswitchServerProvider } from "../fixtures/flipswitch-js-sdk/server-provider.mjs";
import { runCli, startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";

const KEY = "flipswitch-key-0123456789";
const GRACE_SECONDS = 2;
const file = (banner: string) => `apiKey: ${KEY}
flags:
  banner:
    variants: { shown: "${banner}", hidden: "" }
    defaultVariant: shown
  checkout:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
    targeting:
      if: [{ ends_with: [{ var: email }, "@example.com"] }, "on", null]
`;

interface ServerProvider {
  on(event: string, handler: (arg: never) => void): () => void;
  getSseStatus(): string;
  onClose(): Promise<void>;
}

let dir: TempDir;
let cli: CliProcess;
let url: string;

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/dev.yaml", file("hello"));
  ({ cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state"), "--key-grace", String(GRACE_SECONDS)]));
});

afterEach(async () => {
  vi.restoreAllMocks();
  await OpenFeature.clearProviders();
});

afterAll(async () => {
  await OpenFeature.close();
  await cli?.stop();
});

/** Polls `check` (bounded) until it returns something truthy. */
async function until<T>(check: () => T | Promise<T>, what: string): Promise<NonNullable<Awaited<T>>> {
  for (let i = 0; i < 200; i++) {
    const value = await check();
    if (value) return value as NonNullable<Awaited<T>>;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

async function connect(domain: string, apiKey: string) {
  const provider = new FlipswitchServerProvider({ apiKey, baseUrl: url, enablePollingFallback: false }) as ServerProvider;
  const changes: { flagKey: string | null }[] = [];
  provider.on("flagChange", (event: { flagKey: string | null }) => void changes.push(event));
  await OpenFeature.setProviderAndWait(domain, provider as never);
  await until(() => provider.getSseStatus() === "connected", `${domain}'s event stream`);
  return { provider, client: OpenFeature.getClient(domain), changes };
}

describe("the Flipswitch server SDK", () => {
  it("evaluates flags over OFREP, with targeting", async () => {
    const { client } = await connect("eval", KEY);
    expect(await client.getStringDetails("banner", "none", { targetingKey: "u1" })).toMatchObject({
      value: "hello",
      reason: "STATIC",
      variant: "shown",
    });
    expect(await client.getBooleanDetails("checkout", false, { targetingKey: "u1", email: "ada@example.com" })).toMatchObject({
      value: true,
      reason: "TARGETING_MATCH",
    });
    expect(await client.getBooleanValue("checkout", true, { targetingKey: "u2", email: "bob@elsewhere.org" })).toBe(false);
    expect(await client.getBooleanDetails("missing", true, { targetingKey: "u1" })).toMatchObject({
      value: true,
      errorCode: "FLAG_NOT_FOUND",
    });
    // It identified itself with X-Flipswitch-* headers, which the server counts.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/flagserve_client_requests_total\{header="x-flipswitch-sdk",value="javascript\/1\.0\.0"\} [1-9]/);
    expect(metrics).toMatch(/flagserve_client_requests_total\{header="x-flipswitch-features",value="sse=true"\} [1-9]/);
  });

  it("hears a file edit on its event stream and then evaluates the new value", async () => {
    const { client, changes } = await connect("events", KEY);
    await writeFile(dir.file("flags/dev.yaml"), file("edited"));
    await until(() => changes.some((c) => c.flagKey === "banner"), "a flag-updated event for banner");
    expect(await client.getStringValue("banner", "none", { targetingKey: "u1" })).toBe("edited");
  });

  it("is told of a key rotation and keeps working until validUntil, while the app moves to the new key", async () => {
    const warnings: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(" ")));
    const old = await connect("old-key", KEY);

    const rotate = runCli(["keys", "rotate", "dev", dir.file("flags"), "--state-dir", dir.file("state")]);
    expect((await rotate.exited).code).toBe(0);
    const newKey = rotate.stdout().match(/dev {2}(fs_dev_\S+)/)![1]!;

    // What the SDK tells the app: the rotation and until when the current key works.
    const warning = await until(() => warnings.find((w) => w.includes("API key was rotated")), "the SDK's rotation warning");
    const validUntil = Date.parse(warning.match(/valid until: (\S+)/)![1]!);
    expect(validUntil).toBeGreaterThan(Date.now());
    expect(old.changes).toContainEqual(expect.objectContaining({ flagKey: null })); // config-updated: refresh everything

    // Within the grace period the old key still evaluates, and the app switches to the new one.
    expect(await old.client.getStringValue("banner", "none", { targetingKey: "u1" })).not.toBe("none");
    const fresh = await connect("new-key", newKey);
    expect(await fresh.client.getStringDetails("banner", "none", { targetingKey: "u1" })).toMatchObject({ reason: "STATIC" });

    // Then the old key is revoked; the new one goes on working, events included.
    await until(
      async () => (await old.client.getStringDetails("banner", "none", { targetingKey: "u1" })).reason === "ERROR",
      "the old key to be revoked",
    );
    expect(Date.now()).toBeGreaterThanOrEqual(validUntil - 50);
    await writeFile(dir.file("flags/dev.yaml"), file("after rotation").replace(`apiKey: ${KEY}`, `apiKey: ${newKey}`));
    await until(() => fresh.changes.some((c) => c.flagKey === "banner"), "a flag-updated event on the new key's stream");
    expect(await fresh.client.getStringValue("banner", "none", { targetingKey: "u1" })).toBe("after rotation");
  });
});
