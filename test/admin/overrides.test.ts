/** Overrides through the admin API: errors, what clients see, events, ETag, metrics, reloads, persistence. */
import { chmod, readFile, rm, stat, writeFile } from "node:fs/promises";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AdminError, createFlagServer } from "../../src/index.js";
import { tempDir } from "../helpers/files.js";
import { openSse } from "../helpers/sse.js";
import { serveFlagsDir } from "../helpers/server.js";
import { OverrideLayer } from "../../src/admin/overrides.js";
import { loadInlineConfig } from "../../src/config/index.js";
import { silentLogger } from "../../src/log/logger.js";
import { ADMIN_TOKEN, DEV_KEY, DEV_YAML, PROD_KEY, startAdminFixture, type AdminFixture } from "./helpers.js";

let fixture: AdminFixture;
const ofrep = (key: string, flag: string, context: Record<string, unknown> = {}) =>
  fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/${flag}`, {
    method: "POST",
    headers: { "x-api-key": key },
    body: JSON.stringify({ context }),
  }).then((r) => r.json());
const put = (env: string, flag: string, body: unknown) => fixture.admin(`/environments/${env}/overrides/${flag}`, { method: "PUT", body });

beforeAll(async () => {
  fixture = await startAdminFixture();
});
afterEach(async () => {
  await fixture.admin("/environments/dev/overrides", { method: "DELETE" });
  await fixture.admin("/environments/prod/overrides", { method: "DELETE" });
});
afterAll(async () => {
  await OpenFeature.close();
  await fixture?.close();
});

describe("PUT and DELETE .../overrides", () => {
  it("unknown environment or flag: 404 JSON; unknown variant: 422 naming the valid ones; malformed body: 400", async () => {
    const cases: [string, string, unknown, number, string][] = [
      ["nope", "banner", { variant: "green" }, 404, "ENVIRONMENT_NOT_FOUND"],
      ["dev", "nope", { variant: "green" }, 404, "FLAG_NOT_FOUND"],
      ["dev", "banner", { variant: "purple" }, 422, "VARIANT_NOT_FOUND"],
      ["dev", "banner", "{not json", 400, "INVALID_REQUEST"],
      ["dev", "banner", [], 400, "INVALID_REQUEST"],
      ["dev", "banner", {}, 400, "INVALID_REQUEST"],
      ["dev", "banner", { variant: "green", state: "DISABLED" }, 400, "INVALID_REQUEST"],
      ["dev", "banner", { state: "OFF" }, 400, "INVALID_REQUEST"],
      ["dev", "banner", { variant: 1 }, 400, "INVALID_REQUEST"],
    ];
    for (const [env, flag, body, status, code] of cases) {
      const response = await put(env, flag, body);
      expect(response.status, JSON.stringify([env, flag, body])).toBe(status);
      const json = await response.json();
      expect(json.errorCode).toBe(code);
      expect(typeof json.errorDetails).toBe("string");
      if (code === "VARIANT_NOT_FOUND") {
        expect(json.validVariants).toEqual(["blue", "green"]);
        expect(json.errorDetails).toContain("blue, green");
      }
    }
    for (const path of ["/environments/nope/overrides/banner", "/environments/nope/overrides", "/environments/dev/overrides/nope"]) {
      const response = await fixture.admin(path, { method: "DELETE" });
      expect(response.status, path).toBe(404);
    }
    expect((await (await fixture.admin("/overrides")).json()).overrides).toEqual({});
    expect(await ofrep(DEV_KEY, "banner")).toMatchObject({ value: "blue", reason: "STATIC" });
  });

  it("another method on an admin path: 405 with Allow; an unknown admin path: 404; a body over the limit: 413", async () => {
    for (const [method, path, allow] of [
      ["POST", "/environments", "GET"],
      ["GET", "/environments/dev/overrides/banner", "PUT, DELETE"],
      ["PUT", "/environments/dev/overrides", "DELETE"],
      ["GET", "/environments/dev/flags/banner", "PATCH"],
      ["GET", "/environments/dev/evaluate", "POST"],
    ]) {
      const response = await fixture.admin(path!, { method: method! });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
      expect(await response.json()).toMatchObject({ errorCode: "METHOD_NOT_ALLOWED" });
    }
    const unknown = await fixture.admin("/nope");
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).errorCode).toBe("NOT_FOUND");
    const big = await put("dev", "banner", JSON.stringify({ variant: "green", pad: "x".repeat(1024 * 1024) }));
    expect(big.status).toBe(413);
    expect((await big.json()).errorCode).toBe("PAYLOAD_TOO_LARGE");
    expect(fixture.server.overrides.list()).toEqual({});
  });

  it("a real OpenFeature client gets the override's variant (targeting bypassed), only in that environment, then the file's again", async () => {
    await OpenFeature.setProviderAndWait("dev", new OFREPProvider({ baseUrl: fixture.server.url, headers: [["X-API-Key", DEV_KEY]] }));
    const client = OpenFeature.getClient("dev");
    const beta = { targetingKey: "u1", email: "ann@example.com" };
    expect(await client.getBooleanDetails("new-checkout", false, beta)).toMatchObject({ value: true, reason: "TARGETING_MATCH" });

    const response = await put("dev", "new-checkout", { variant: "off" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ environment: "dev", flagKey: "new-checkout", override: { variant: "off" } });
    expect(await client.getBooleanDetails("new-checkout", true, beta)).toMatchObject({ value: false, variant: "off", reason: "STATIC" });

    await put("dev", "banner", { variant: "green" });
    expect(await client.getStringValue("banner", "x", beta)).toBe("green");
    expect(await ofrep(PROD_KEY, "banner")).toMatchObject({ value: "green" }); // prod's own default, untouched
    await put("prod", "banner", { state: "DISABLED" });
    expect(await ofrep(PROD_KEY, "banner")).toMatchObject({ reason: "DISABLED" });

    const cleared = await fixture.admin("/environments/dev/overrides/new-checkout", { method: "DELETE" });
    expect(await cleared.json()).toEqual({ environment: "dev", flagKey: "new-checkout", removed: true });
    expect(await client.getBooleanDetails("new-checkout", false, beta)).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect((await (await fixture.admin("/overrides")).json()).overrides).toEqual({
      dev: { banner: { variant: "green" } },
      prod: { banner: { state: "DISABLED" } },
    });

    const all = await fixture.admin("/environments/dev/overrides", { method: "DELETE" });
    expect(await all.json()).toEqual({ environment: "dev", removed: ["banner"] });
    expect(await client.getStringValue("banner", "x", beta)).toBe("blue");
  });

  it("GET environments shows each flag's file definition, its segments and the active override", async () => {
    await put("dev", "new-checkout", { state: "DISABLED" });
    const { environments, problems } = await (await fixture.admin("/environments")).json();
    expect(problems).toEqual([]);
    const dev = environments.find((e: { name: string }) => e.name === "dev");
    expect(dev.segments).toHaveProperty("beta");
    expect(dev.problems).toEqual([]);
    expect(dev.flags.find((f: { key: string }) => f.key === "new-checkout")).toMatchObject({
      state: "ENABLED",
      defaultVariant: "off",
      variants: { on: true, off: false },
      hasTargeting: true,
      segments: ["beta"],
      override: { state: "DISABLED" },
    });
    expect(dev.flags.find((f: { key: string }) => f.key === "banner")).toMatchObject({ hasTargeting: false, segments: [], override: null });
  });

  it("each set or clear sends flag-updated on both streams, changes the bulk ETag and counts in /metrics; the same override again sends nothing", async () => {
    const bulk = () => fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": DEV_KEY } });
    const etag0 = (await bulk()).headers.get("etag");
    const { eventStreams } = await (await bulk()).json();
    const primary = await openSse(`${fixture.server.url}/api/v1/flags/events`, { "x-api-key": DEV_KEY, accept: "text/event-stream" });
    const ofrepStream = await openSse(`${fixture.server.url}${eventStreams[0].endpoint.requestUri}`);
    const adminStream = await openSse(`${fixture.server.url}/api/v1/admin/events`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    try {
      await put("dev", "banner", { variant: "green" });
      const event = await primary.next((b) => b.event === "flag-updated");
      expect(JSON.parse(event.data!)).toMatchObject({ flagKey: "banner" });
      const refetch = await ofrepStream.next((b) => b.data?.includes("refetchEvaluation") ?? false);
      const etag1 = (await bulk()).headers.get("etag");
      expect(etag1).not.toBe(etag0);
      expect(JSON.parse(refetch.data!).etag).toBeTypeOf("string");
      const change = await adminStream.next((b) => b.event === "change");
      expect(JSON.parse(change.data!)).toMatchObject({
        environment: "dev",
        change: "updated",
        flags: [{ key: "banner", change: "updated" }],
      });

      const before = primary.blocks.length;
      await put("dev", "banner", { variant: "green" }); // no change: no event
      await fixture.admin("/environments/dev/overrides/banner", { method: "DELETE" });
      const cleared = await primary.next((b) => b.event === "flag-updated", 5000, before);
      expect(JSON.parse(cleared.data!)).toMatchObject({ flagKey: "banner" });
      expect(primary.events().filter((b) => b.event === "flag-updated")).toHaveLength(2);
      expect((await bulk()).headers.get("etag")).toBe(etag0); // back to the file's answers

      const metrics = await (await fetch(`${fixture.server.url}/metrics`)).text();
      expect(metrics).toMatch(/flagserve_override_changes_total\{action="set"\} [1-9]/);
      expect(metrics).toMatch(/flagserve_override_changes_total\{action="clear"\} [1-9]/);
      expect(metrics).toMatch(/flagserve_overrides 0/);
    } finally {
      primary.close();
      ofrepStream.close();
      adminStream.close();
    }
  });
});

describe("overrides and file reloads", () => {
  it("survive an edit of other flags, and are dropped (and logged) when the edit removes their variant or flag", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const warnings: string[] = [];
    const logger = { info() {}, warn: (m: string) => warnings.push(m), error() {} };
    // The running server itself (not the programmatic API's view): the test reads its store.
    const server = await serveFlagsDir(dir, { adminToken: ADMIN_TOKEN, logger: logger as never });
    const value = (flag: string) =>
      fetch(`${server.url}/ofrep/v1/evaluate/flags/${flag}`, { method: "POST", headers: { "x-api-key": DEV_KEY }, body: "{}" }).then((r) =>
        r.json(),
      );
    let watching = false;
    try {
      await server.overrides.set("dev", "banner", { variant: "green" });
      await server.overrides.set("dev", "new-checkout", { variant: "on" });
      // Another flag's edit: both overrides stay.
      await writeFile(dir.file("flags/dev.yaml"), DEV_YAML.replace("defaultVariant: off # what", "defaultVariant: on # what"));
      await vi.waitFor(async () => expect((await server.overrides.list()).dev).toBeDefined(), { timeout: 5000 });
      // Watched at every turn of the event loop: the override is gone from the list only once
      // the store serves the edit, so a client that reads the list and then evaluates never sees
      // an answer the list no longer explains.
      const seenOutOfStep: string[] = [];
      watching = true;
      const watch = () => {
        const listed = Object.hasOwn(server.overrides.list().dev ?? {}, "banner");
        const served = Object.hasOwn(server.store.get("dev")!.config.flags.banner!.variants, "green");
        if (!listed && served) seenOutOfStep.push("override dropped while the store still serves variant green");
        if (watching) setImmediate(watch);
      };
      watch();
      await writeFile(dir.file("flags/dev.yaml"), DEV_YAML.replace("      green: green\n", "      teal: teal\n"));
      await vi.waitFor(() => expect(server.overrides.list()).toEqual({ dev: { "new-checkout": { variant: "on" } } }), {
        timeout: 5000,
        interval: 20,
      });
      watching = false;
      expect(seenOutOfStep.slice(0, 1)).toEqual([]);
      expect(warnings.join("\n")).toMatch(/override of banner dropped: variant green is no longer defined/);
      expect(await value("banner")).toMatchObject({ value: "blue" });
      expect(await value("new-checkout")).toMatchObject({ value: true, reason: "STATIC" });

      await writeFile(dir.file("flags/dev.yaml"), DEV_YAML.replace(/  new-checkout:[\s\S]*?  banner:/, "  banner:"));
      await vi.waitFor(() => expect(server.overrides.list()).toEqual({}), { timeout: 5000, interval: 20 });
      expect(warnings.join("\n")).toMatch(/override of new-checkout dropped: the flag is no longer defined/);
    } finally {
      watching = false;
      await server.close();
    }
  });

  it("are listed from the moment the store serves them to the moment it stops, set and cleared (with an overrides file)", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const server = await serveFlagsDir(dir, { adminToken: ADMIN_TOKEN, overridesFile: dir.file("overrides.yaml") });
    // Watched at every turn of the event loop while the set and the clear run: a client that
    // reads the list and then evaluates never gets an answer the list does not explain.
    const seenOutOfStep: string[] = [];
    let watching = true;
    const watch = () => {
      const listed = server.overrides.list().dev?.banner !== undefined;
      const served = server.store.get("dev")!.config.flags.banner!.defaultVariant === "green";
      if (listed !== served) seenOutOfStep.push(listed ? "listed before it is served" : "served after it left the list");
      if (watching) setImmediate(watch);
    };
    try {
      watch();
      await server.overrides.set("dev", "banner", { variant: "green" });
      expect(server.overrides.list()).toEqual({ dev: { banner: { variant: "green" } } });
      await server.overrides.clear("dev", "banner");
      expect(server.overrides.list()).toEqual({});
      watching = false;
      expect(seenOutOfStep.slice(0, 1)).toEqual([]);
    } finally {
      watching = false;
      await server.close();
    }
  });

  it("a broken edit keeps the last good configuration with its overrides, and overrides still apply meanwhile", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const server = await createFlagServer({ config: dir.file("flags"), adminToken: ADMIN_TOKEN, stateDir: dir.file("state") });
    const admin = (path: string, method = "GET", body?: unknown) =>
      fetch(`${server.url}/api/v1/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: body && JSON.stringify(body),
      }).then((r) => r.json());
    try {
      await writeFile(dir.file("flags/dev.yaml"), `${DEV_YAML}  broken: [\n`);
      await vi.waitFor(async () => expect((await admin("/environments")).environments[0].problems).not.toEqual([]), {
        timeout: 5000,
        interval: 20,
      });
      const { environments } = await admin("/environments");
      expect(environments[0].problems[0]).toMatch(/dev\.yaml:\d+:\d+ /);
      await admin("/environments/dev/overrides/banner", "PUT", { variant: "green" });
      const answer = await fetch(`${server.url}/ofrep/v1/evaluate/flags/banner`, {
        method: "POST",
        headers: { "x-api-key": DEV_KEY },
      }).then((r) => r.json());
      expect(answer).toMatchObject({ value: "green" });
      // The problem is still reported: applying an override is not a reload.
      expect((await admin("/environments")).environments[0].problems).not.toEqual([]);
      expect((await (await fetch(`${server.url}/readyz`)).json()).status).toBe("degraded");
      // A new environment that never loaded: its problem is listed beside the environments.
      await writeFile(dir.file("flags/qa.yaml"), "flags: [\n");
      await vi.waitFor(async () => expect((await admin("/environments")).problems).toEqual([expect.stringMatching(/qa\.yaml:\d+:\d+ /)]), {
        timeout: 5000,
        interval: 20,
      });
    } finally {
      await server.close();
    }
  });
});

describe("the admin feed's status events", () => {
  it("open with the current problems (no id), then come with an id each time the problems change", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const server = await createFlagServer({ config: dir.file("flags"), adminToken: ADMIN_TOKEN, stateDir: dir.file("state") });
    const feed = await openSse(`${server.url}/api/v1/admin/events`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    const isStatus = (b: { event?: string }) => b.event === "status";
    const timestamp = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    try {
      const first = await feed.next(isStatus);
      expect(first.raw).toBe(`event: status\ndata: ${first.data}\n\n`);
      expect(Object.keys(JSON.parse(first.data!))).toEqual(["problems", "timestamp"]);
      expect(JSON.parse(first.data!)).toEqual({ problems: {}, timestamp });

      await writeFile(dir.file("flags/dev.yaml"), `${DEV_YAML}  broken: [\n`);
      const broken = await feed.next(isStatus, 5000, feed.blocks.indexOf(first) + 1);
      expect(broken.fields).toEqual(["event", "data", "id"]);
      expect(broken.raw).toBe(`event: status\ndata: ${broken.data}\nid: ${broken.id}\n\n`);
      expect(JSON.parse(broken.data!)).toEqual({ problems: { dev: [expect.stringMatching(/dev\.yaml:\d+:\d+ /)] }, timestamp });

      await writeFile(dir.file("flags/dev.yaml"), DEV_YAML);
      const fixed = await feed.next(isStatus, 5000, feed.blocks.indexOf(broken) + 1);
      expect(JSON.parse(fixed.data!)).toEqual({ problems: {}, timestamp });
    } finally {
      feed.close();
      await server.close();
    }
  });
});

describe("an override on a flag whose edit is broken", () => {
  it("stays, and the flag keeps answering with it; cleared, the last good definition answers; the page's data names the problem", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const server = await createFlagServer({ config: dir.file("flags"), adminToken: ADMIN_TOKEN, stateDir: dir.file("state") });
    const banner = () =>
      fetch(`${server.url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": DEV_KEY } }).then((r) => r.json());
    const view = async () => {
      const { environments } = await fetch(`${server.url}/api/v1/admin/environments`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      }).then((r) => r.json());
      return environments[0].flags.find((f: { key: string }) => f.key === "banner");
    };
    try {
      await server.overrides.set("dev", "banner", { variant: "green" });
      await writeFile(
        dir.file("flags/dev.yaml"),
        DEV_YAML.replace("    defaultVariant: blue\n", "    defaultVariant: blue\n    targeting: { nope: [1] }\n"),
      );
      await vi.waitFor(async () => expect((await view()).problem).toMatch(/unknown operator "nope"/), { timeout: 5000, interval: 20 });
      expect(server.overrides.list()).toEqual({ dev: { banner: { variant: "green" } } });
      expect(await banner()).toMatchObject({ value: "green" });
      expect(await view()).toMatchObject({ defaultVariant: "blue", override: { variant: "green" } });
      // Cleared while broken: the last good file definition answers, not the override.
      await server.overrides.clear("dev", "banner");
      expect(await banner()).toMatchObject({ value: "blue" });
      await server.overrides.set("dev", "banner", { variant: "green" });
      expect(await banner()).toMatchObject({ value: "green" });

      await writeFile(dir.file("flags/dev.yaml"), DEV_YAML.replace("      green: green\n", "      green: GREEN\n"));
      await vi.waitFor(async () => expect(await banner()).toMatchObject({ value: "GREEN" }), { timeout: 5000, interval: 20 });
      expect((await view()).problem).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe("--overrides FILE and the programmatic API", () => {
  /** A directory serving DEV_YAML, and how to start a server over it that keeps overrides in its overrides.yaml. */
  const withOverridesFile = async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const overridesFile = dir.file("overrides.yaml");
    const start = () =>
      createFlagServer({ config: dir.file("flags"), adminToken: ADMIN_TOKEN, stateDir: dir.file("state"), overridesFile });
    return { dir, overridesFile, start };
  };

  it("keeps overrides in a YAML file across restarts", async () => {
    const { overridesFile, start } = await withOverridesFile();
    const first = await start();
    await first.overrides.set("dev", "banner", { variant: "green" });
    await first.overrides.set("dev", "new-checkout", { state: "DISABLED" });
    await first.overrides.clear("dev", "new-checkout");
    await first.close();
    await vi.waitFor(async () => expect(await readFile(overridesFile, "utf8")).not.toContain("new-checkout"), { timeout: 2000 });
    expect(await readFile(overridesFile, "utf8")).toMatch(/environments:\n {2}dev:\n {4}banner:\n {6}variant: green\n/);

    const second = await start();
    try {
      expect(second.overrides.list()).toEqual({ dev: { banner: { variant: "green" } } });
      const answer = await fetch(`${second.url}/ofrep/v1/evaluate/flags/banner`, {
        method: "POST",
        headers: { "x-api-key": DEV_KEY },
      }).then((r) => r.json());
      expect(answer).toMatchObject({ value: "green" });
    } finally {
      await second.close();
    }
  });

  it("an override an edit drops leaves the file too, so a restart does not bring it back", async () => {
    const { dir, overridesFile, start } = await withOverridesFile();
    const first = await start();
    try {
      await first.overrides.set("dev", "banner", { variant: "green" });
      await first.overrides.set("dev", "new-checkout", { variant: "on" });
      await writeFile(dir.file("flags/dev.yaml"), DEV_YAML.replace("      green: green\n", "      teal: teal\n"));
      await vi.waitFor(() => expect(first.overrides.list()).toEqual({ dev: { "new-checkout": { variant: "on" } } }), { timeout: 5000 });
    } finally {
      await first.close();
    }
    expect(await readFile(overridesFile, "utf8")).not.toContain("banner");
    const second = await start();
    try {
      expect(second.overrides.list()).toEqual({ dev: { "new-checkout": { variant: "on" } } });
    } finally {
      await second.close();
    }
  });

  it("an override dropped while another change is being written stays dropped, in the list and the file", async () => {
    const dir = await tempDir();
    const file = dir.file("overrides.yaml");
    const layer = new OverrideLayer({ logger: silentLogger, file });
    const dev = async (variants: Record<string, string>) =>
      (await loadInlineConfig({ dev: { flags: { banner: { variants, defaultVariant: "blue" } } } })).environments.get("dev")!;
    layer.apply(await dev({ blue: "blue", green: "green" }));
    await layer.set("dev", "banner", { variant: "green" });
    const greenRemoved = await dev({ blue: "blue" });
    // A change of another environment is being written (its copy of the overrides taken) when a reload drops banner's.
    const writing = layer.set("prod", "x", { state: "DISABLED" });
    await new Promise((resolve) => setImmediate(resolve));
    layer.apply(greenRemoved);
    await writing;
    await layer.settled();
    expect(layer.list()).toEqual({ prod: { x: { state: "DISABLED" } } });
    expect(await readFile(file, "utf8")).not.toContain("banner");
  });

  it("of an environment removed from the configuration are kept for its return, and can be cleared meanwhile", async () => {
    const { dir, overridesFile, start } = await withOverridesFile();
    const QA_KEY = "qa-key-0123456789";
    const qaYaml = `apiKey: ${QA_KEY}\nflags:\n  banner:\n    variants: { blue: blue, green: green }\n    defaultVariant: blue\n`;
    const banner = (key: string) =>
      fetch(`${server.url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": key } }).then((r) => r.json());
    await dir.write("flags/qa.yaml", qaYaml);
    const server = await start();
    try {
      await server.overrides.set("qa", "banner", { variant: "green" });
      await rm(dir.file("flags/qa.yaml"));
      await vi.waitFor(async () => expect(await banner(QA_KEY)).toMatchObject({ errorCode: "UNAUTHORIZED" }), { timeout: 5000 });
      // Not answered while qa is gone, but kept: qa answers with it again once it is back.
      expect(server.overrides.list()).toEqual({ qa: { banner: { variant: "green" } } });
      await dir.write("flags/qa.yaml", qaYaml);
      await vi.waitFor(async () => expect(await banner(QA_KEY)).toMatchObject({ value: "green" }), { timeout: 5000 });

      await rm(dir.file("flags/qa.yaml"));
      await vi.waitFor(async () => expect(await banner(QA_KEY)).toMatchObject({ errorCode: "UNAUTHORIZED" }), { timeout: 5000 });
      // Cleared while qa is gone: gone from the list and the file, and qa comes back without it.
      expect(await server.overrides.clear("qa", "other")).toEqual([]);
      expect(await server.overrides.clear("qa", "banner")).toEqual(["banner"]);
      expect(server.overrides.list()).toEqual({});
      expect(await readFile(overridesFile, "utf8")).not.toContain("qa");
      await expect(server.overrides.clear("qa")).rejects.toMatchObject({ status: 404, errorCode: "ENVIRONMENT_NOT_FOUND" });
      await dir.write("flags/qa.yaml", qaYaml);
      await vi.waitFor(async () => expect(await banner(QA_KEY)).toMatchObject({ value: "blue" }), { timeout: 5000 });
      expect(server.overrides.list()).toEqual({});
    } finally {
      await server.close();
    }
  });

  it("set/clear/list on the object createFlagServer returns, with AdminErrors", async () => {
    const server = await createFlagServer({
      config: {
        environments: { test: { apiKey: "inline-key-0123456789", flags: { f: { variants: { a: 1, b: 2 }, defaultVariant: "a" } } } },
      },
    });
    try {
      await expect(server.overrides.set("test", "f", { variant: "c" })).rejects.toMatchObject({
        status: 422,
        errorCode: "VARIANT_NOT_FOUND",
      });
      await expect(server.overrides.set("test", "g", { variant: "a" })).rejects.toBeInstanceOf(AdminError);
      expect(await server.overrides.set("test", "f", { variant: "b" })).toEqual({ variant: "b" });
      const answer = await fetch(`${server.url}/ofrep/v1/evaluate/flags/f`, {
        method: "POST",
        headers: { "x-api-key": "inline-key-0123456789" },
      }).then((r) => r.json());
      expect(answer).toMatchObject({ value: 2, variant: "b" });
      // update() goes through the layer too: the override stays on the new definition.
      await server.update("test", { apiKey: "inline-key-0123456789", flags: { f: { variants: { a: 1, b: 20 }, defaultVariant: "a" } } });
      const after = await fetch(`${server.url}/ofrep/v1/evaluate/flags/f`, {
        method: "POST",
        headers: { "x-api-key": "inline-key-0123456789" },
      }).then((r) => r.json());
      expect(after).toMatchObject({ value: 20, variant: "b" });
      expect(await server.overrides.clear("test")).toEqual(["f"]);
      expect(server.overrides.list()).toEqual({});
    } finally {
      await server.close();
    }
  });
});

describe("the admin token", () => {
  it("is generated once, kept in the state directory with mode 0600, and FLAGSERVE_ADMIN_TOKEN or the option win", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const start = (adminToken?: string) => createFlagServer({ config: dir.file("flags"), stateDir: dir.file("state"), adminToken });
    const saved = process.env.FLAGSERVE_ADMIN_TOKEN;
    delete process.env.FLAGSERVE_ADMIN_TOKEN;
    try {
      const first = await start();
      const token = first.adminToken!;
      await first.close();
      expect(token).toMatch(/^fsa_[A-Za-z0-9_-]{43}$/);
      expect((await readFile(dir.file("state/admin-token"), "utf8")).trim()).toBe(token);
      expect((await stat(dir.file("state/admin-token"))).mode & 0o777).toBe(0o600);
      const second = await start();
      expect(second.adminToken).toBe(token);
      await second.close();
      process.env.FLAGSERVE_ADMIN_TOKEN = "from-the-environment-0123";
      const third = await start();
      expect(third.adminToken).toBe("from-the-environment-0123");
      await third.close();
      const fourth = await start("from-the-option-0123");
      expect(fourth.adminToken).toBe("from-the-option-0123");
      await fourth.close();
    } finally {
      if (saved === undefined) delete process.env.FLAGSERVE_ADMIN_TOKEN;
      else process.env.FLAGSERVE_ADMIN_TOKEN = saved;
    }
  });
});

describe("--overrides FILE: an acknowledged change is on disk", () => {
  it("a PUT is answered once the file holds it; a write that fails is an error naming the cause and changes nothing", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    const overridesFile = dir.file("kept/overrides.yaml");
    await dir.mkdir("kept");
    const own = await startAdminFixture({ overridesFile }, dir);
    try {
      const set = await own.admin("/environments/dev/overrides/banner", { method: "PUT", body: { variant: "green" } });
      expect(set.status).toBe(200);
      // Read right after the answer, not waited for.
      expect(await readFile(overridesFile, "utf8")).toContain("variant: green");

      await rm(dir.file("kept"), { recursive: true }); // the file's directory is gone: no write can succeed
      const failed = await own.admin("/environments/dev/overrides/new-checkout", { method: "PUT", body: { state: "DISABLED" } });
      expect(failed.status).toBe(500);
      const body = await failed.json();
      expect(body.errorCode).toBe("NOT_SAVED");
      expect(body.errorDetails).toContain(overridesFile);
      expect(body.errorDetails).toContain("ENOENT");
      const cleared = await own.admin("/environments/dev/overrides/banner", { method: "DELETE" });
      expect(cleared.status).toBe(500);
      // Nothing changed in memory: the list and what clients get are as before.
      expect(own.server.overrides.list()).toEqual({ dev: { banner: { variant: "green" } } });
      const answer = await fetch(`${own.server.url}/ofrep/v1/evaluate/flags/banner`, {
        method: "POST",
        headers: { "x-api-key": DEV_KEY },
      }).then((r) => r.json());
      expect(answer).toMatchObject({ value: "green" });
    } finally {
      await own.close();
    }
  });

  it("is refused at start when it is, or lies inside, a served source, or cannot be written", async () => {
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", DEV_YAML);
    await dir.write("not-a-dir", "");
    const start = (overridesFile: string) =>
      createFlagServer({ config: dir.file("flags"), adminToken: ADMIN_TOKEN, stateDir: dir.file("state"), overridesFile });
    await expect(start(dir.file("flags/dev.yaml"))).rejects.toThrow(/--overrides .*dev\.yaml: lies inside the served source .*flags;/);
    const single = createFlagServer({
      config: dir.file("flags/dev.yaml"),
      adminToken: ADMIN_TOKEN,
      stateDir: dir.file("state"),
      overridesFile: dir.file("flags/dev.yaml"),
    });
    await expect(single).rejects.toThrow(/--overrides .*dev\.yaml: is the served source/);
    await expect(start(dir.file("flags/overrides.yaml"))).rejects.toThrow(
      /--overrides .*overrides\.yaml: lies inside the served source .*flags/,
    );
    await expect(start(dir.file("not-a-dir/overrides.yaml"))).rejects.toThrow(/cannot be written \(ENOTDIR/);
    await expect(start(dir.file("missing/overrides.yaml"))).rejects.toThrow(/cannot be written \(ENOENT/);
    if (process.getuid?.() !== 0) {
      await dir.mkdir("read-only");
      await chmod(dir.file("read-only"), 0o555);
      await expect(start(dir.file("read-only/overrides.yaml"))).rejects.toThrow(/cannot be written \(EACCES/);
    }
    // The served file is untouched.
    expect(await readFile(dir.file("flags/dev.yaml"), "utf8")).toBe(DEV_YAML);
  });
});
