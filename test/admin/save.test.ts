/** Save to file: PATCH .../flags/{flag} rewrites one line of the defining file, or refuses cleanly. */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createFlagServer } from "../../src/index.js";
import { setScalarInSource } from "../../src/admin/save.js";
import { ConfigServer } from "../helpers/config-server.js";
import { tempDir } from "../helpers/files.js";
import { DEV_KEY, DEV_YAML, startAdminFixture, type AdminFixture } from "./helpers.js";

let fixture: AdminFixture;
const patch = (env: string, flag: string, body: unknown) => fixture.admin(`/environments/${env}/flags/${flag}`, { method: "PATCH", body });
const file = () => fixture.dir.file("flags/dev.yaml");

/** The changed lines between two texts, as `git diff --no-index` counts them. */
function diffLines(before: string, after: string, dir: string): string[] {
  const a = `${dir}/a.yaml`;
  const b = `${dir}/b.yaml`;
  writeFileSync(a, before);
  writeFileSync(b, after);
  let out = "";
  try {
    execFileSync("git", ["diff", "--no-index", "--unified=0", a, b], { encoding: "utf8" });
  } catch (error) {
    out = (error as { stdout: string }).stdout; // exit 1: there are differences
  }
  return out.split("\n").filter((l) => /^[-+][^-+]/.test(l) || /^[-+]$/.test(l));
}

beforeAll(async () => {
  fixture = await startAdminFixture();
});
afterAll(() => fixture?.close());

describe("PATCH .../flags/{flag}", () => {
  it("rewrites defaultVariant in place: a one-line diff, comments kept; the watcher reloads it and clients see it", async () => {
    const response = await patch("dev", "new-checkout", { defaultVariant: "on" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ environment: "dev", flagKey: "new-checkout", file: file(), changed: ["defaultVariant"] });
    const after = await readFile(file(), "utf8");
    expect(diffLines(DEV_YAML, after, fixture.dir.path)).toEqual([
      "-    defaultVariant: off # what everyone gets",
      "+    defaultVariant: on # what everyone gets",
    ]);
    await vi.waitFor(
      async () => {
        const answer = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/new-checkout`, {
          method: "POST",
          headers: { "x-api-key": DEV_KEY },
          body: '{"context":{"targetingKey":"u"}}',
        });
        expect(await answer.json()).toMatchObject({ value: true, variant: "on" });
      },
      { timeout: 5000, interval: 25 },
    );
    // Already so: 200, nothing written.
    const again = await patch("dev", "new-checkout", { defaultVariant: "on" });
    expect(await again.json()).toMatchObject({ changed: [] });
    await writeFile(file(), DEV_YAML);
  });

  it("adds a state line when the flag has none: still a one-line diff", async () => {
    const response = await patch("dev", "new-checkout", { state: "DISABLED" });
    expect(response.status).toBe(200);
    const after = await readFile(file(), "utf8");
    expect(diffLines(DEV_YAML, after, fixture.dir.path)).toEqual(["+    state: DISABLED"]);
    await writeFile(file(), DEV_YAML);
  });

  it("invalid: 422 with the problem located in the file, which stays untouched; bad bodies 400; unknown flag 404", async () => {
    const response = await patch("dev", "banner", { defaultVariant: "purple" });
    expect(response.status).toBe(422);
    const body = await response.json();
    expect(body).toMatchObject({ errorCode: "INVALID_CONFIG", key: "banner" });
    expect(body.problems).toEqual([
      { file: file(), line: 17, col: 21, message: expect.stringContaining("'purple' is not one of the variants (blue, green)") },
    ]);
    expect(await readFile(file(), "utf8")).toBe(DEV_YAML);

    for (const bad of [{}, { state: "OFF" }, { defaultVariant: 3 }, { variants: {} }, "nope"]) {
      const r = await patch("dev", "banner", bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect((await r.json()).errorCode).toBe("INVALID_REQUEST");
    }
    expect((await patch("dev", "nope", { state: "DISABLED" })).status).toBe(404);
    expect((await patch("nope", "banner", { state: "DISABLED" })).status).toBe(404);
    expect(await readFile(file(), "utf8")).toBe(DEV_YAML);
  });

  it("a flag whose definition in the file is broken: 409, the file untouched", async () => {
    const broken = DEV_YAML.replace("    defaultVariant: blue\n", "    defaultVariant: blue\n    targeting: { nope: [1] }\n");
    await writeFile(file(), broken);
    await vi.waitFor(
      async () => {
        const { environments } = await (await fixture.admin("/environments")).json();
        expect(environments[0].flags.find((f: { key: string }) => f.key === "banner").problem).toBeDefined();
      },
      { timeout: 5000, interval: 25 },
    );
    const response = await patch("dev", "banner", { defaultVariant: "green" });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      errorCode: "CONFLICT",
      key: "banner",
      errorDetails: expect.stringContaining("fix the file first"),
    });
    expect(await readFile(file(), "utf8")).toBe(broken);
    await writeFile(file(), DEV_YAML);
  });

  it("a flag not read from a file: 409 with a clear message", async () => {
    const server = await createFlagServer({
      config: { environments: { test: { flags: { f: { variants: { a: 1, b: 2 }, defaultVariant: "a" } } } } },
      adminToken: "inline-admin-token-0123",
    });
    try {
      const response = await fetch(`${server.url}/api/v1/admin/environments/test/flags/f`, {
        method: "PATCH",
        headers: { authorization: "Bearer inline-admin-token-0123" },
        body: '{"defaultVariant":"b"}',
      });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ errorCode: "CONFLICT", errorDetails: expect.stringContaining("not read from files") });
    } finally {
      await server.close();
    }
  });
});

describe("save to file for an environment read from a URL", () => {
  it("409 naming the URL, which cannot be written", async () => {
    const http = await ConfigServer.start();
    const state = await tempDir();
    http.set("/test.yaml", "flags:\n  f:\n    variants: { a: 1, b: 2 }\n    defaultVariant: a\n");
    const server = await createFlagServer({
      config: http.url("/test.yaml"),
      adminToken: "url-admin-token-0123",
      stateDir: state.file("state"),
    });
    try {
      const response = await fetch(`${server.url}/api/v1/admin/environments/test/flags/f`, {
        method: "PATCH",
        headers: { authorization: "Bearer url-admin-token-0123" },
        body: '{"defaultVariant":"b"}',
      });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({
        errorCode: "CONFLICT",
        errorDetails: `cannot save flag f of test to a file: it is read from ${http.url("/test.yaml")}, which flagserve cannot write`,
      });
    } finally {
      await server.close();
      await http.stop();
    }
  });
});

describe("save to file in a multi-environment file", () => {
  it("changes the line under environments.NAME.flags, nothing else", async () => {
    const dir = await tempDir();
    const example = await readFile(new URL("../../flags.example.yaml", import.meta.url), "utf8");
    await dir.write("flags.yaml", example);
    const server = await createFlagServer({
      config: dir.file("flags.yaml"),
      adminToken: "multi-admin-token-0123",
      stateDir: dir.file("state"),
    });
    try {
      const response = await fetch(`${server.url}/api/v1/admin/environments/production/flags/dark-mode`, {
        method: "PATCH",
        headers: { authorization: "Bearer multi-admin-token-0123" },
        body: '{"state":"ENABLED"}',
      });
      expect(response.status).toBe(200);
      const after = await readFile(dir.file("flags.yaml"), "utf8");
      const production = example.indexOf("\n  production:\n");
      expect(after).toBe(example.slice(0, production) + example.slice(production).replace("state: DISABLED", "state: ENABLED"));
      const lines = diffLines(example, after, dir.path);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^-\s+state: DISABLED/);
      expect(lines[1]).toMatch(/^\+\s+state: ENABLED/);
    } finally {
      await server.close();
    }
  });
});

describe("setScalarInSource", () => {
  it("keeps quoting style and every other byte; quotes values YAML would read as something else", () => {
    const source = "flags:\n  f: # c\n    variants: { 'on': true, 'true': 1 }\n    defaultVariant: 'on'   # kept\n";
    expect(setScalarInSource(source, ["flags", "f"], "defaultVariant", "true")).toBe(source.replace("'on'   #", "'true'   #"));
    const plain = 'flags:\n  f:\n    defaultVariant: a\r\n    variants: {a: 1, "null": 2}\r\n';
    expect(setScalarInSource(plain, ["flags", "f"], "defaultVariant", "null")).toBe(
      plain.replace("defaultVariant: a", 'defaultVariant: "null"'),
    );
    const flow = "flags:\n  f: { variants: { a: 1 } }\n";
    expect(() => setScalarInSource(flow, ["flags", "f"], "state", "DISABLED")).toThrow(/add it by hand/);
  });
});
