/**
 * The flagd port (`--flagd-port`) against the real `@openfeature/flagd-provider` from npm,
 * unchanged, in both of its modes, and a real server in-process: RPC mode (flagd.evaluation.v2)
 * and in-process mode (flagd.sync.v1, evaluated by flagd-core in the provider). Every answer is
 * compared with what OFREP answers over HTTP for the same flag and context, so both transports
 * are held to one evaluation path.
 */
import { FlagdProvider } from "@openfeature/flagd-provider";
import { OpenFeature, ProviderEvents, type Client, type EvaluationDetails, type FlagValue, type JsonValue } from "@openfeature/server-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { tempDir, type TempDir } from "../helpers/files.js";

const KEY = "flagd-port-key-0123456789";
const OTHER_KEY = "flagd-other-key-0123456789";

/** Every value type, a segment used twice (once inside another segment), fractional, disabled, a code default, metadata. */
const FLAGS = `apiKey: ${KEY}
metadata: { flagSetId: fixture, version: 3 }
segments:
  premium: { "==": [{ var: plan }, premium] }
  premium-in-eu: { and: [{ $ref: premium }, { "==": [{ var: region }, eu] }] }
flags:
  bool-flag: { variants: { "on": true, "off": false }, defaultVariant: "on" }
  string-flag: { variants: { blue: blue, red: red }, defaultVariant: blue }
  int-flag: { variants: { answer: 42, zero: 0 }, defaultVariant: answer }
  float-flag: { variants: { pi: 3.14, e: 2.718 }, defaultVariant: pi }
  object-flag: { variants: { nested: { a: 1, b: { c: true } } }, defaultVariant: nested }
  targeted-flag:
    variants: { vip: true, default: false }
    defaultVariant: default
    targeting: { if: [{ $ref: premium }, vip, null] }
  eu-flag:
    variants: { eu: eu, world: world }
    defaultVariant: world
    targeting: { if: [{ $ref: premium-in-eu }, eu, null] }
  split-flag:
    variants: { a: a, b: b, c: c }
    defaultVariant: a
    targeting: { fractional: [[a, 50], [b, 25], [c, 25]] }
  email-split-flag:
    variants: { x: x, y: y }
    defaultVariant: x
    targeting: { if: [{ $ref: premium }, { fractional: [{ cat: [{ var: $flagd.flagKey }, { var: email }] }, [x, 1], [y, 1]] }, null] }
  disabled-flag: { state: DISABLED, variants: { "on": true, "off": false }, defaultVariant: "on" }
  default-flag: { variants: { "on": true, "off": false }, defaultVariant: null }
  meta-flag: { variants: { "on": true }, defaultVariant: "on", metadata: { team: ecommerce, version: 4, beta: true } }
`;

const OTHER = `apiKey: ${OTHER_KEY}
flags:
  bool-flag: { variants: { "on": true, "off": false }, defaultVariant: "off" }
`;

type Kind = "boolean" | "string" | "number" | "object";
const KINDS: Record<string, Kind> = {
  "bool-flag": "boolean",
  "string-flag": "string",
  "int-flag": "number",
  "float-flag": "number",
  "object-flag": "object",
  "targeted-flag": "boolean",
  "eu-flag": "string",
  "split-flag": "string",
  "email-split-flag": "string",
  "disabled-flag": "boolean",
  "default-flag": "boolean",
  "meta-flag": "boolean",
};
const DEFAULTS: Record<Kind, FlagValue> = { boolean: false, string: "fallback", number: -1, object: { fallback: true } };

const CONTEXTS: Record<string, JsonValue>[] = [
  { targetingKey: "u1", plan: "premium", region: "eu", email: "ann@example.com" },
  { targetingKey: "u2", plan: "premium", region: "us", email: "bob@example.com" },
  { targetingKey: "u3", plan: "free" },
  ...Array.from({ length: 7 }, (_, i) => ({ targetingKey: `user-${i}`, plan: "premium", email: `user${i}@example.com` })),
];

let dir: TempDir;
let server: FlagServer;

/** OFREP's answer for the same flag and context, over HTTP. */
async function ofrep(key: string, context: Record<string, JsonValue>, apiKey = KEY) {
  const response = await fetch(`${server.url}/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body: JSON.stringify({ context }),
  });
  return (await response.json()) as {
    value?: FlagValue;
    variant?: string;
    reason?: string;
    errorCode?: string;
    metadata?: Record<string, unknown>;
  };
}

function details(client: Client, key: string, context: Record<string, JsonValue>): Promise<EvaluationDetails<FlagValue>> {
  const kind = KINDS[key] ?? "boolean";
  const fallback = DEFAULTS[kind];
  if (kind === "boolean") return client.getBooleanDetails(key, fallback as boolean, context);
  if (kind === "string") return client.getStringDetails(key, fallback as string, context);
  if (kind === "number") return client.getNumberDetails(key, fallback as number, context);
  return client.getObjectDetails(key, fallback as JsonValue, context);
}

/** What OFREP answered, as the provider should report it (`reasonOf` maps flagserve's reasons to a mode's). */
function expected(answer: Awaited<ReturnType<typeof ofrep>>, key: string, reasonOf = (reason: string) => reason) {
  return answer.value === undefined
    ? { value: DEFAULTS[KINDS[key]!], reason: reasonOf(answer.reason!) }
    : { value: answer.value, variant: answer.variant, reason: reasonOf(answer.reason!) };
}

/** Resolves with the flags named by the next configuration change the client hears about that names `key`. */
function nextChange(client: Client, key: string): Promise<string[]> {
  return new Promise((resolve) => {
    const handler = (event?: { flagsChanged?: string[] }) => {
      if (!event?.flagsChanged?.includes(key)) return;
      client.removeHandler(ProviderEvents.ConfigurationChanged, handler);
      resolve(event.flagsChanged);
    };
    client.addHandler(ProviderEvents.ConfigurationChanged, handler);
  });
}

function nextEvent(client: Client, event: ProviderEvents): Promise<{ message?: string } | undefined> {
  return new Promise((resolve) => {
    const handler = (details?: { message?: string }) => {
      client.removeHandler(event, handler);
      resolve(details);
    };
    client.addHandler(event, handler);
  });
}

const provider = (options: ConstructorParameters<typeof FlagdProvider>[0]) =>
  new FlagdProvider({ host: "127.0.0.1", port: server.flagdPort!, retryBackoffMaxMs: 100, ...options });

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/test.yaml", FLAGS);
  await dir.write("flags/other.yaml", OTHER);
  server = await createFlagServer({ config: dir.file("flags"), flagdPort: 0, stateDir: dir.file("state") });
  await Promise.all([
    // Caching off, to compare reasons call by call; the cached provider is the one edits must reach.
    OpenFeature.setProviderAndWait("rpc", provider({ selector: KEY, cache: "disabled" })),
    OpenFeature.setProviderAndWait("rpc-cached", provider({ selector: KEY })),
    OpenFeature.setProviderAndWait("in-process", provider({ resolverType: "in-process", selector: KEY })),
  ]);
});

afterAll(async () => {
  await OpenFeature.close();
  await server?.close();
});

describe("RPC mode (flagd.evaluation.v2)", () => {
  it("answers every flag and context as OFREP does: values of every type, variants, reasons, metadata", async () => {
    const client = OpenFeature.getClient("rpc");
    let compared = 0;
    for (const context of CONTEXTS) {
      await Promise.all(
        Object.keys(KINDS).map(async (key) => {
          const [answer, got] = await Promise.all([ofrep(key, context), details(client, key, context)]);
          expect(got, `${key} ${JSON.stringify(context)}`).toMatchObject(expected(answer, key));
          expect(got.errorCode).toBeUndefined();
          expect(got.flagMetadata).toEqual(answer.metadata);
          compared++;
        }),
      );
    }
    expect(compared).toBe(CONTEXTS.length * Object.keys(KINDS).length);
  });

  it("covers what the fixture is for: each type, a targeting match, every split variant, DISABLED and a code default", async () => {
    const client = OpenFeature.getClient("rpc");
    const premium = CONTEXTS[0]!;
    expect(await client.getBooleanDetails("bool-flag", false, premium)).toMatchObject({ value: true, variant: "on", reason: "STATIC" });
    expect(await client.getStringDetails("string-flag", "x", premium)).toMatchObject({ value: "blue", reason: "STATIC" });
    expect(await client.getNumberDetails("int-flag", 0, premium)).toMatchObject({ value: 42, variant: "answer" });
    expect(await client.getNumberDetails("float-flag", 0, premium)).toMatchObject({ value: 3.14, variant: "pi" });
    expect(await client.getObjectDetails("object-flag", {}, premium)).toMatchObject({ value: { a: 1, b: { c: true } }, variant: "nested" });
    expect(await client.getBooleanDetails("targeted-flag", false, premium)).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect(await client.getStringDetails("eu-flag", "x", premium)).toMatchObject({ value: "eu", reason: "TARGETING_MATCH" });
    expect(await client.getBooleanDetails("disabled-flag", false, premium)).toMatchObject({ value: false, reason: "DISABLED" });
    expect(await client.getBooleanDetails("default-flag", true, premium)).toMatchObject({ value: true, reason: "DEFAULT" });
    const splits = new Set<FlagValue>();
    for (const context of CONTEXTS) splits.add((await client.getStringDetails("split-flag", "x", context)).value);
    expect([...splits].sort()).toEqual(["a", "b", "c"]);
  });

  it("answers errors with flagd's codes: unknown flag, type mismatch", async () => {
    const client = OpenFeature.getClient("rpc");
    expect(await ofrep("missing", {})).toMatchObject({ errorCode: "FLAG_NOT_FOUND" });
    expect(await client.getBooleanDetails("missing", false, {})).toMatchObject({
      value: false,
      reason: "ERROR",
      errorCode: "FLAG_NOT_FOUND",
    });
    expect(await client.getStringDetails("bool-flag", "x", {})).toMatchObject({ value: "x", reason: "ERROR", errorCode: "TYPE_MISMATCH" });
    expect(await client.getNumberDetails("string-flag", 1, {})).toMatchObject({ value: 1, errorCode: "TYPE_MISMATCH" });
  });

  it("selects the environment whose key is the selector", async () => {
    await OpenFeature.setProviderAndWait("rpc-other", provider({ selector: OTHER_KEY, cache: "disabled" }));
    const other = OpenFeature.getClient("rpc-other");
    expect(await other.getBooleanDetails("bool-flag", true, {})).toMatchObject({ value: false, variant: "off" });
    expect(await other.getStringDetails("string-flag", "x", {})).toMatchObject({ errorCode: "FLAG_NOT_FOUND" });
  });

  it("refuses a call without a selector, or with one that selects nothing, saying what to send", async () => {
    const client = OpenFeature.getClient("rpc");
    const unknown = provider({ selector: "not-a-key", cache: "disabled" });
    await expect(unknown.resolveBooleanEvaluation("bool-flag", false, {}, console)).rejects.toThrow(
      /selector matches no environment.*API key/,
    );
    const none = provider({ cache: "disabled" });
    await expect(none.resolveBooleanEvaluation("bool-flag", false, {}, console)).rejects.toThrow(/no selector.*API key/);
    await Promise.all([unknown.onClose(), none.onClose()]);
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({ value: true }); // still up
  });

  it("a file edit reaches the provider as a configuration change naming the flag; the next evaluation sees it", async () => {
    const client = OpenFeature.getClient("rpc-cached");
    expect(await client.getStringDetails("string-flag", "x", {})).toMatchObject({ value: "blue", reason: "STATIC" });
    expect(await client.getStringDetails("string-flag", "x", {})).toMatchObject({ value: "blue", reason: "CACHED" });
    const changed = nextChange(client, "string-flag");
    await dir.write("flags/test.yaml", FLAGS.replace("defaultVariant: blue", "defaultVariant: red"));
    expect(await changed).toEqual(["string-flag"]);
    expect(await client.getStringDetails("string-flag", "x", {})).toMatchObject({ value: "red", reason: "STATIC" });
  });

  it("a segment edit names the flags that use it, directly or through another segment", async () => {
    const client = OpenFeature.getClient("rpc-cached");
    const changed = nextChange(client, "targeted-flag");
    await dir.write(
      "flags/test.yaml",
      FLAGS.replace("defaultVariant: blue", "defaultVariant: red").replace("[{ var: plan }, premium]", "[{ var: plan }, gold]"),
    );
    expect((await changed).sort()).toEqual(["email-split-flag", "eu-flag", "targeted-flag"]);
    expect(await client.getBooleanDetails("targeted-flag", true, { targetingKey: "u", plan: "gold" })).toMatchObject({
      value: true,
      reason: "TARGETING_MATCH",
    });
  });

  it("an override from the admin API does the same", async () => {
    const client = OpenFeature.getClient("rpc-cached");
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({ value: true });
    const changed = nextChange(client, "bool-flag");
    await server.overrides.set("test", "bool-flag", { variant: "off" });
    expect(await changed).toEqual(["bool-flag"]);
    expect(await client.getBooleanDetails("bool-flag", true, {})).toMatchObject({ value: false, variant: "off" });
    const cleared = nextChange(client, "bool-flag");
    await server.overrides.clear("test", "bool-flag");
    await cleared;
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({ value: true });
  });

  it("a fault rule on flagd-evaluate is the failure it describes; cleared, the answers come back", async () => {
    const client = OpenFeature.getClient("rpc");
    server.setFaults([{ route: "flagd-evaluate", environment: "test", ratio: 1, status: 500 }]);
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({
      value: false,
      reason: "ERROR",
      errorCode: "GENERAL",
      errorMessage: expect.stringContaining("injected fault: 500 on flagd-evaluate"),
    });
    server.setFaults([{ route: "flagd-evaluate", ratio: 1, status: 404 }]);
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({ errorCode: "FLAG_NOT_FOUND" });
    server.setFaults([]);
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({ value: true });
  });

  it("a drop rule on flagd-events ends the stream: the provider goes stale, reconnects and is ready again", async () => {
    const client = OpenFeature.getClient("rpc-cached");
    await client.getBooleanDetails("bool-flag", false, {}); // this connection's stream is bound
    const stale = nextEvent(client, ProviderEvents.Stale);
    server.setFaults([{ route: "flagd-events", ratio: 1, drop: true }]);
    server.setFaults([]);
    expect(await stale).toBeDefined();
    await nextEvent(client, ProviderEvents.Ready); // added while stale: the reconnect's
    // The new stream is bound to the connection's environment again, and hears the next change.
    const changed = nextChange(client, "string-flag");
    await dir.write("flags/test.yaml", FLAGS);
    await changed;
    expect(await client.getStringDetails("string-flag", "x", {})).toMatchObject({ value: "blue" });
  });
});

describe("in-process mode (flagd.sync.v1)", () => {
  /** flagd-core says TARGETING_MATCH where flagserve says SPLIT (a documented difference). */
  const inProcessReason = (reason: string) => (reason === "SPLIT" ? "TARGETING_MATCH" : reason);

  it("is ready from the sync stream and evaluates every flag and context as the server does ($ref, nested segments, fractional)", async () => {
    const client = OpenFeature.getClient("in-process");
    let compared = 0;
    for (const context of CONTEXTS) {
      await Promise.all(
        Object.keys(KINDS).map(async (key) => {
          const [answer, got] = await Promise.all([ofrep(key, context), details(client, key, context)]);
          expect(got, `${key} ${JSON.stringify(context)}`).toMatchObject(expected(answer, key, inProcessReason));
          expect(got.errorCode).toBeUndefined();
          // The provider adds its selector as `scope`.
          const { scope, ...metadata } = got.flagMetadata;
          expect(scope).toBe(KEY);
          expect(metadata).toEqual(answer.metadata);
          compared++;
        }),
      );
    }
    expect(compared).toBe(CONTEXTS.length * Object.keys(KINDS).length);
  });

  it("follows a file edit and an override", async () => {
    const client = OpenFeature.getClient("in-process");
    expect(await client.getStringDetails("eu-flag", "x", CONTEXTS[0]!)).toMatchObject({ value: "eu" });
    const edited = nextChange(client, "eu-flag");
    await dir.write("flags/test.yaml", FLAGS.replace("[{ var: region }, eu]", "[{ var: region }, us]"));
    expect(await edited).toEqual(["eu-flag"]);
    expect(await client.getStringDetails("eu-flag", "x", CONTEXTS[0]!)).toMatchObject({ value: "world", reason: "DEFAULT" });
    expect(await client.getStringDetails("eu-flag", "x", CONTEXTS[1]!)).toMatchObject({ value: "eu", reason: "TARGETING_MATCH" });

    const overridden = nextChange(client, "int-flag");
    await server.overrides.set("test", "int-flag", { variant: "zero" });
    await overridden;
    expect(await client.getNumberDetails("int-flag", -1, {})).toMatchObject({ value: 0, variant: "zero" });
    expect(await ofrep("int-flag", {})).toMatchObject({ value: 0, variant: "zero" });
    await server.overrides.clear("test", "int-flag");
    await dir.write("flags/test.yaml", FLAGS);
  });

  it("does not start with a selector that selects nothing, saying what to send", async () => {
    const refused = provider({ resolverType: "in-process", selector: "not-a-key", fatalStatusCodes: ["UNAUTHENTICATED"] });
    await expect(OpenFeature.setProviderAndWait("in-process-refused", refused)).rejects.toThrow(/selector matches no environment.*API key/);
    await refused.onClose();
  });

  it("a flag broken by an edit answers PARSE_ERROR in both modes, as on OFREP; the other flags keep answering", async () => {
    const inProcess = OpenFeature.getClient("in-process");
    const rpc = OpenFeature.getClient("rpc");
    const added = nextChange(inProcess, "broken-flag");
    await dir.write(
      "flags/test.yaml",
      `${FLAGS}  broken-flag: { variants: { "on": true }, defaultVariant: "on", targeting: { invalid: [1] } }\n`,
    );
    await added;
    expect(await ofrep("broken-flag", {})).toMatchObject({ errorCode: "PARSE_ERROR" });
    expect(await inProcess.getBooleanDetails("broken-flag", false, {})).toMatchObject({
      value: false,
      reason: "ERROR",
      errorCode: "PARSE_ERROR",
    });
    expect(await rpc.getBooleanDetails("broken-flag", false, {})).toMatchObject({
      value: false,
      reason: "ERROR",
      errorCode: "PARSE_ERROR",
    });
    expect(await inProcess.getBooleanDetails("bool-flag", false, {})).toMatchObject({ value: true });
    const removed = nextChange(inProcess, "broken-flag");
    await dir.write("flags/test.yaml", FLAGS);
    await removed;
  });

  it("a flag whose segment an edit broke keeps its last good version in-process too", async () => {
    const client = OpenFeature.getClient("in-process");
    const premium = { targetingKey: "u", plan: "premium" };
    const edited = nextChange(client, "string-flag");
    // The segment breaks (flags using it keep their last good version); another flag's edit applies.
    await dir.write(
      "flags/test.yaml",
      FLAGS.replace('premium: { "==": [{ var: plan }, premium] }', "premium: { nope: [1] }").replace(
        "defaultVariant: blue",
        "defaultVariant: red",
      ),
    );
    await edited;
    expect(await ofrep("targeted-flag", premium)).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect(await client.getBooleanDetails("targeted-flag", false, premium)).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect(await client.getStringDetails("eu-flag", "x", { ...premium, region: "eu" })).toMatchObject({ value: "eu" });
    const restored = nextChange(client, "string-flag");
    await dir.write("flags/test.yaml", FLAGS);
    await restored;
  });

  it("a drop rule on flagd-sync ends the stream; the provider reconnects and is ready again", async () => {
    const client = OpenFeature.getClient("in-process");
    const stale = nextEvent(client, ProviderEvents.Stale);
    server.setFaults([{ route: "flagd-sync", ratio: 1, drop: true }]);
    server.setFaults([]);
    expect((await stale)?.message).toContain("injected fault: flagd-sync dropped");
    await nextEvent(client, ProviderEvents.Ready);
    expect(await client.getBooleanDetails("bool-flag", false, {})).toMatchObject({ value: true });
  });
});
