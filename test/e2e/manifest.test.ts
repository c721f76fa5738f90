/**
 * The OpenFeature CLI's manifest, against its own vendored schemas and a real server: what
 * `flagserve manifest` writes validates against flag-manifest.schema.json and says what OFREP
 * answers when no targeting matches (asked through the real OFREP provider, with the type the
 * manifest gives); `GET /openfeature/v0/manifest` answers the ManifestEnvelope of sync-api.yaml,
 * with the API's errors, and follows the files.
 */
import { fileURLToPath } from "node:url";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { runHere } from "../cli/run.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { apiSchema, expectValid as valid, manifestSchema as validManifest, sampleManifest } from "../helpers/openfeature-cli.js";
import { serveFlagsDir } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const EXAMPLE = fileURLToPath(new URL("../../flags.example.yaml", import.meta.url));
const validEnvelope = apiSchema("ManifestEnvelope");
const validError = apiSchema("ErrorResponse");

/** Every flag type, a description (the flag set's own is not one), targeting that no empty context matches, a disabled flag. */
const EVERY_TYPE = `
apiKey: manifest-key-0123456789
metadata:
  team: web
  description: the flag set, not a flag
flags:
  bool-flag:
    variants: { on: true, off: false }
    defaultVariant: on
    metadata: { description: Turns the new flow on }
  string-flag:
    variants: { blue: "#1f6feb", green: "#2da44e" }
    defaultVariant: green
    targeting:
      if: [{ "==": [{ var: plan }, pro] }, blue, null]
  integer-flag:
    variants: { small: 10, large: 100 }
    defaultVariant: large
  float-flag:
    variants: { low: 0.25, high: 1.5 }
    defaultVariant: low
  mixed-number-flag:
    variants: { whole: 2, half: 0.5 }
    defaultVariant: whole
  object-flag:
    variants:
      classic: { steps: 3, express: { providers: [card], pay: false } }
      streamlined: { steps: 1 }
    defaultVariant: classic
    metadata: { description: 3 }
  disabled-flag:
    state: DISABLED
    variants: { on: true, off: false }
    defaultVariant: off
`;

interface Manifest {
  flags: Record<string, { flagType: string; defaultValue: unknown; description?: string }>;
}

const manifestOf = async (source: string, env: string): Promise<Manifest> => {
  const ran = await runHere(["manifest", source, "--env", env, "-o", "-"]);
  expect(ran, ran.stderr).toMatchObject({ code: 0, stderr: "" });
  return JSON.parse(ran.stdout) as Manifest;
};

/** How a generated accessor asks: the provider's method for the manifest's type. */
const resolve = (provider: OFREPProvider, key: string, flagType: string, defaultValue: unknown) => {
  if (flagType === "boolean") return provider.resolveBooleanEvaluation(key, defaultValue as boolean, {});
  if (flagType === "string") return provider.resolveStringEvaluation(key, defaultValue as string, {});
  if (flagType === "integer" || flagType === "float") return provider.resolveNumberEvaluation(key, defaultValue as number, {});
  return provider.resolveObjectEvaluation(key, defaultValue as object, {});
};

/**
 * The manifest's defaults against what the server answers an empty context: each flag whose
 * answer is its default (reason DEFAULT or STATIC: no targeting matched), asked as a generated
 * accessor would; returns the other flags with why they were not compared.
 */
async function compareWithOfrep(server: RunningServer, env: string, manifest: Manifest): Promise<Record<string, string>> {
  const key = server.keys()[env]!;
  const res = await fetch(`${server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": key }, body: "{}" });
  const { flags } = (await res.json()) as { flags: { key: string; value?: unknown; reason?: string; errorCode?: string }[] };
  expect(flags.map((f) => f.key)).toEqual(Object.keys(manifest.flags));
  const provider = new OFREPProvider({ baseUrl: server.url, headers: [["X-API-Key", key]] });
  const notCompared: Record<string, string> = {};
  for (const item of flags) {
    const { flagType, defaultValue } = manifest.flags[item.key]!;
    if (item.reason !== "DEFAULT" && item.reason !== "STATIC") {
      notCompared[item.key] = item.reason ?? item.errorCode!;
      continue;
    }
    expect(item.value, item.key).toEqual(defaultValue);
    const resolved = await resolve(provider, item.key, flagType, defaultValue);
    expect(resolved, item.key).toMatchObject({ value: defaultValue, reason: item.reason });
    if (flagType === "integer") expect(Number.isInteger(resolved.value), item.key).toBe(true);
  }
  return notCompared;
}

it("reads the manifest schema as the OpenFeature CLI means it: its sample passes, a wrong default fails", () => {
  valid(validManifest, sampleManifest());
  expect(validManifest({ flags: { f: { flagType: "integer", defaultValue: 0.5 } } })).toBe(false);
  expect(validManifest({ flags: { f: { flagType: "boolean" } } })).toBe(false);
});

describe("the bundled example", () => {
  let server: RunningServer;
  let state: TempDir;
  beforeAll(async () => {
    state = await tempDir();
    server = await startServer({ source: { path: EXAMPLE }, port: 0, host: "127.0.0.1", stateDir: state.path, logger: silentLogger });
  });
  afterAll(() => server?.close());

  it.each(["development", "production"])("%s: the manifest validates and its defaults are what OFREP answers", async (env) => {
    const manifest = await manifestOf(EXAMPLE, env);
    valid(validManifest, manifest);
    expect(Object.keys(manifest.flags)).toEqual(["banner-color", "checkout-config", "dark-mode", "max-upload-mb", "new-checkout"]);
    // banner-color's fractional split needs a targetingKey in development (a static answer in production).
    const notCompared = await compareWithOfrep(server, env, manifest);
    expect(notCompared).toEqual(
      env === "development" ? { "banner-color": "TARGETING_KEY_MISSING", "dark-mode": "DISABLED" } : { "dark-mode": "DISABLED" },
    );
    expect(manifest.flags["dark-mode"]).toEqual({ flagType: "boolean", defaultValue: false });
  });

  it("GET /openfeature/v0/manifest answers the ManifestEnvelope, the same flags as the command", async () => {
    const res = await fetch(`${server.url}/openfeature/v0/manifest`, { headers: { authorization: "Bearer dev-example-key" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-manifest-capabilities")).toBe("read");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const envelope = (await res.json()) as { flags: { key: string; type: string; defaultValue: unknown; description?: string }[] };
    valid(validEnvelope, envelope);
    const manifest = await manifestOf(EXAMPLE, "development");
    expect(envelope.flags).toEqual(
      Object.entries(manifest.flags).map(([key, f]) => ({ key, type: f.flagType, defaultValue: f.defaultValue })),
    );
  });
});

describe("a flag of every type", () => {
  let dir: TempDir;
  let server: RunningServer;
  const KEY = "manifest-key-0123456789";
  const get = (headers: Record<string, string> = { "x-api-key": KEY }, path = "/openfeature/v0/manifest", method = "GET") =>
    fetch(`${server.url}${path}`, { method, headers });
  beforeAll(async () => {
    dir = await tempDir();
    await dir.write("flags/development.yaml", EVERY_TYPE);
    server = await serveFlagsDir(dir);
  });
  afterAll(() => server?.close());

  it("has a manifest that validates, with each type, and defaults that are what OFREP answers", async () => {
    const manifest = await manifestOf(dir.file("flags"), "development");
    valid(validManifest, manifest);
    expect(manifest.flags).toEqual({
      "bool-flag": { flagType: "boolean", defaultValue: true, description: "Turns the new flow on" },
      "disabled-flag": { flagType: "boolean", defaultValue: false },
      "float-flag": { flagType: "float", defaultValue: 0.25 },
      "integer-flag": { flagType: "integer", defaultValue: 100 },
      "mixed-number-flag": { flagType: "float", defaultValue: 2 },
      "object-flag": { flagType: "object", defaultValue: { express: { pay: false, providers: ["card"] }, steps: 3 }, description: "3" },
      "string-flag": { flagType: "string", defaultValue: "#2da44e" },
    });
    expect(await compareWithOfrep(server, "development", manifest)).toEqual({ "disabled-flag": "DISABLED" });
  });

  it("answers the envelope: every flag as the schema says, floats as the OpenFeature CLI reads them", async () => {
    const res = await get({ authorization: `Bearer ${KEY}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-manifest-capabilities")).toBe("read");
    const envelope = (await res.json()) as { flags: { key: string; type: string; defaultValue: unknown }[] };
    // sync-api.yaml's `type` has no float (nor FlagDefaultValue a number); `openfeature pull` reads
    // "float" as the manifest's float type. Everything else validates as the description says.
    const floats = envelope.flags.filter((f) => f.type === "float");
    expect(floats).toEqual([
      { key: "float-flag", type: "float", defaultValue: 0.25 },
      { key: "mixed-number-flag", type: "float", defaultValue: 2 },
    ]);
    valid(validEnvelope, { flags: envelope.flags.filter((f) => f.type !== "float") });
    expect((await (await get()).json()) as unknown).toEqual(envelope); // X-API-Key opens it too
  });

  it("answers 401 in the API's error shape without a key or with a wrong one", async () => {
    for (const headers of [{}, { authorization: "Bearer not-a-key" }, { "x-api-key": "not-a-key" }]) {
      const res = await get(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="flagserve"');
      expect(res.headers.get("x-manifest-capabilities")).toBeNull();
      const body = await res.json();
      valid(validError, body);
      expect(body).toMatchObject({ error: { status: 401 } });
    }
  });

  it("answers 405 to the API's writes, saying the files are the source of truth (and HEAD as GET)", async () => {
    for (const [method, path] of [
      ["POST", "/openfeature/v0/manifest/flags"],
      ["PUT", "/openfeature/v0/manifest/flags/bool-flag"],
      ["DELETE", "/openfeature/v0/manifest/flags/bool-flag"],
    ] as const) {
      const res = await get({ authorization: `Bearer ${KEY}` }, path, method);
      expect(res.status, `${method} ${path}`).toBe(405);
      const body = (await res.json()) as { error: { message: string; status: number } };
      valid(validError, body);
      expect(body.error).toMatchObject({ status: 405, message: expect.stringContaining("flag files are the source of truth") });
    }
    const post = await get({ "x-api-key": KEY }, "/openfeature/v0/manifest", "POST");
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD, OPTIONS"]);
    const head = await get({ "x-api-key": KEY }, "/openfeature/v0/manifest", "HEAD");
    expect([head.status, head.headers.get("x-manifest-capabilities"), await head.text()]).toEqual([200, "read", ""]);
  });

  it("answers browsers as OFREP does (CORS), and is counted in /metrics", async () => {
    const res = await get({ "x-api-key": KEY, origin: "http://app.example" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await get(
      { origin: "http://app.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
      "/openfeature/v0/manifest",
      "OPTIONS",
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toBe("authorization");
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^flagserve_http_responses_total\{route="\/openfeature\/v0\/manifest",status="200"\} [1-9]/m);
    expect(metrics).toMatch(/^flagserve_http_responses_total\{route="\/openfeature\/v0\/manifest\/flags\/\*\*",status="405"\} [1-9]/m);
  });

  it("follows the files: an edited default is in the next answer", async () => {
    const defaultOf = async (key: string) =>
      ((await (await get()).json()) as { flags: { key: string; defaultValue: unknown }[] }).flags.find((f) => f.key === key)?.defaultValue;
    expect(await defaultOf("integer-flag")).toBe(100);
    await dir.write("flags/development.yaml", EVERY_TYPE.replace("defaultVariant: large", "defaultVariant: small"));
    await until("the manifest to follow the edit", async () => (await defaultOf("integer-flag")) === 10);
  });
});

describe("flags the manifest cannot fully describe, served", () => {
  it("gives a flag without a default variant a null defaultValue (openfeature pull asks for one), and refuses while a flag answers PARSE_ERROR", async () => {
    const dir = await tempDir();
    const flags = `apiKey: manifest-key-0123456789\nflags:\n  no-default:\n    variants: { a: 1, b: 2 }\n`;
    await dir.write("flags/development.yaml", flags);
    const server = await serveFlagsDir(dir, { allowInvalid: true });
    try {
      const get = () => fetch(`${server.url}/openfeature/v0/manifest`, { headers: { "x-api-key": "manifest-key-0123456789" } });
      expect(await (await get()).json()).toEqual({ flags: [{ key: "no-default", type: "integer", defaultValue: null }] });
      // A new flag broken from the start answers PARSE_ERROR: the manifest says which, with the API's error shape.
      await dir.write("flags/development.yaml", `${flags}  broken:\n    variants: { a: 1 }\n    defaultVariant: c\n`);
      let res = await get();
      await until("the broken flag to be served", async () => (res = await get()).status !== 200);
      expect(res.status).toBe(409);
      const body = (await res.json()) as { error: { message: string } };
      valid(validError, body);
      expect(body.error.message).toMatch(/PARSE_ERROR: 'broken' \(.*defaultVariant 'c'/);
    } finally {
      await server.close();
    }
  });
});
