/**
 * flagd's web provider (`@openfeature/flagd-web-provider`, unchanged, with `@openfeature/web-sdk`)
 * against the flagd port in Node: Connect over HTTP/1.1 with JSON, as it speaks from a browser
 * (ResolveAll for every flag of the context, EventStream for changes), its selector sent by an
 * interceptor. Every answer is compared with OFREP's for the same flag and context.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { symlink } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Interceptor } from "@connectrpc/connect";
import { FlagdWebProvider } from "@openfeature/flagd-web-provider";
import { OpenFeature, ProviderEvents, type EvaluationContext, type FlagValue, type JsonValue } from "@openfeature/web-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { until } from "../helpers/wait.js";

const KEY = "flagd-web-key-0123456789";

const FLAGS = `apiKey: ${KEY}
segments:
  premium: { "==": [{ var: plan }, premium] }
flags:
  bool-flag: { variants: { "on": true, "off": false }, defaultVariant: "on" }
  string-flag: { variants: { blue: blue, red: red }, defaultVariant: blue }
  number-flag: { variants: { answer: 42, pi: 3.14 }, defaultVariant: answer }
  object-flag: { variants: { nested: { a: 1, b: { c: [true, null] } } }, defaultVariant: nested }
  targeted-flag:
    variants: { vip: true, regular: false }
    defaultVariant: regular
    targeting: { if: [{ $ref: premium }, vip, null] }
  split-flag:
    variants: { a: a, b: b, c: c }
    defaultVariant: a
    targeting: { fractional: [[a, 50], [b, 25], [c, 25]] }
  disabled-flag: { state: DISABLED, variants: { "on": true }, defaultVariant: "on" }
`;

type Kind = "boolean" | "string" | "number" | "object";
const KINDS: Record<string, Kind> = {
  "bool-flag": "boolean",
  "string-flag": "string",
  "number-flag": "number",
  "object-flag": "object",
  "targeted-flag": "boolean",
  "split-flag": "string",
  "disabled-flag": "boolean",
};
const DEFAULTS: Record<Kind, FlagValue> = { boolean: false, string: "fallback", number: -1, object: { fallback: true } };

const CONTEXTS: EvaluationContext[] = [
  { targetingKey: "u1", plan: "premium" },
  { targetingKey: "u2", plan: "free" },
  ...Array.from({ length: 6 }, (_, i) => ({ targetingKey: `user-${i}` })),
];

/** What the page adds to every call: the environment's key as flagd's selector. */
const selecting =
  (selector: string): Interceptor =>
  (next) =>
  (request) => {
    request.header.set("flagd-selector", selector);
    return next(request);
  };

let dir: TempDir;
let server: FlagServer;

async function ofrep(key: string, context: EvaluationContext) {
  const response = await fetch(`${server.url}/ofrep/v1/evaluate/flags/${key}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY },
    body: JSON.stringify({ context }),
  });
  return (await response.json()) as { value?: FlagValue; variant?: string; reason: string };
}

function details(key: string) {
  const client = OpenFeature.getClient();
  const kind = KINDS[key]!;
  const fallback = DEFAULTS[kind];
  if (kind === "boolean") return client.getBooleanDetails(key, fallback as boolean);
  if (kind === "string") return client.getStringDetails(key, fallback as string);
  if (kind === "number") return client.getNumberDetails(key, fallback as number);
  return client.getObjectDetails(key, fallback as JsonValue);
}

const provider = (selector: string, options: { maxRetries?: number } = {}) =>
  new FlagdWebProvider({ host: "127.0.0.1", port: server.flagdPort!, tls: false, interceptors: [selecting(selector)], ...options });

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/web.yaml", FLAGS);
  server = await createFlagServer({ config: dir.file("flags"), flagdPort: 0, stateDir: dir.file("state") });
  await OpenFeature.setContext(CONTEXTS[0]!);
  // No retries: this provider (0.7.4) reconnects even after it is closed, and a reconnect racing
  // the server's shutdown fails its ResolveAll in a promise nothing handles.
  await OpenFeature.setProviderAndWait(provider(KEY, { maxRetries: -1 }));
});

afterAll(async () => {
  await OpenFeature.close();
  await server?.close();
});

describe("flagd's web provider (Connect, JSON, HTTP/1.1)", () => {
  it("is ready, and answers every flag and context as OFREP does", async () => {
    let compared = 0;
    for (const context of CONTEXTS) {
      await OpenFeature.setContext(context); // the provider fetches every flag again (ResolveAll)
      for (const key of Object.keys(KINDS)) {
        const [answer, got] = await Promise.all([ofrep(key, context), details(key)]);
        const label = `${key} ${JSON.stringify(context)}`;
        if (answer.value === undefined) {
          // No value (disabled): the caller's default, as flagd answers it.
          expect(got.value, label).toEqual(DEFAULTS[KINDS[key]!]);
        } else {
          expect(got, label).toMatchObject({ value: answer.value, variant: answer.variant, reason: answer.reason });
          expect(got.errorCode, label).toBeUndefined();
        }
        compared++;
      }
    }
    expect(compared).toBe(CONTEXTS.length * Object.keys(KINDS).length);
    // Every kind of answer was among them.
    const reasons = new Set<string>();
    for (const context of CONTEXTS) {
      await OpenFeature.setContext(context);
      for (const key of ["targeted-flag", "split-flag", "bool-flag"]) reasons.add(details(key).reason!);
    }
    expect([...reasons].sort()).toEqual(["DEFAULT", "SPLIT", "STATIC", "TARGETING_MATCH"]);
  });

  it("hears a file edit as a configuration change, and serves the new value", async () => {
    const client = OpenFeature.getClient();
    expect(client.getStringValue("string-flag", "fallback")).toBe("blue");
    const changed = new Promise<void>((resolve) => client.addHandler(ProviderEvents.ConfigurationChanged, () => resolve()));
    await dir.write("flags/web.yaml", FLAGS.replace("defaultVariant: blue", "defaultVariant: red"));
    await changed;
    expect(client.getStringDetails("string-flag", "fallback")).toMatchObject({ value: "red", variant: "red", reason: "STATIC" });
    expect((await ofrep("string-flag", {})).value).toBe("red");
  });

  it("gets no flags with a selector that selects nothing: the server refuses its stream, and it reports an error", async () => {
    const before = await refusedStreams();
    const refused = provider("not-a-key", { maxRetries: -1 });
    const failed = new Promise<void>((resolve) => refused.events.addHandler(ProviderEvents.Error, () => resolve()));
    void refused.initialize();
    await failed;
    expect(await refusedStreams()).toBe(before + 1);
    expect(() => refused.resolveBooleanEvaluation("bool-flag")).toThrow(/not found/);
    await refused.onClose();
  });
});

async function refusedStreams(): Promise<number> {
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^flagserve_flagd_calls_total\{method="EventStream",code="UNAUTHENTICATED"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

describe("docs/flagd.md's web provider example", () => {
  const ROOT = fileURLToPath(new URL("../../", import.meta.url));
  const page = readFileSync(`${ROOT}docs/flagd.md`, "utf8");
  /** The first fenced block of `language` after the line that mentions `marker`. */
  const blockAfter = (marker: string, language: string): string => {
    const from = page.indexOf(marker);
    const match = new RegExp("^```" + language + "\\n([\\s\\S]*?)^```$", "m").exec(page.slice(from));
    if (from < 0 || !match) throw new Error(`no ${language} block after ${marker} in docs/flagd.md`);
    return match[1]!;
  };

  it("runs as pasted, in Node: the server's answers for its context, then the change an edit makes", async () => {
    const example = await tempDir();
    const flags = blockAfter("this flag file, `flags/development.yaml`", "yaml");
    await example.write("flags/development.yaml", flags);
    const docsServer = await createFlagServer({ config: example.file("flags"), flagdPort: 0, stateDir: example.file("state") });
    // As pasted, but for the port: the page's 8013 is this server's.
    const code = blockAfter("`web.mjs`", "js");
    expect(code).toContain("port: 8013");
    await example.write("web.mjs", code.replace("port: 8013", `port: ${docsServer.flagdPort}`));
    await symlink(`${ROOT}node_modules`, example.file("node_modules"));
    const child = spawn(process.execPath, ["web.mjs"], { cwd: example.path, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    try {
      await until("the example's first answers", () => /rollout/.test(output), 15_000);
      const newCheckout = output.split(/^}$/m).find((printed) => printed.includes("flagKey: 'new-checkout'"));
      expect(newCheckout).toContain("value: true");
      expect(newCheckout).toContain("reason: 'TARGETING_MATCH'");
      await example.write(
        "flags/development.yaml",
        flags.replace("fractional: [[old, 50], [new, 50]]", "fractional: [[old, 0], [new, 100]]"),
      );
      await until("the change the edit makes", () => /^changed: new$/m.test(output), 10_000);
    } finally {
      child.kill();
      await docsServer.close();
    }
  }, 30_000);
});
