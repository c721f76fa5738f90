/**
 * `flagserve session`, run in-process (runCli), against a running `flagserve` process, after a
 * real OpenFeature client asked with a session.
 */
import { readFile } from "node:fs/promises";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { freePort } from "../helpers/ports.js";
import { DEV_KEY, DEV_YAML } from "../admin/helpers.js";
import { formatSession } from "../../src/cli/session.js";
import { runHere } from "./run.js";

const ID = "checkout/run-1";
let dir: TempDir;
let server: CliProcess;
let url: string;

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/dev.yaml", DEV_YAML);
  ({ cli: server, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")], { env: { FLAGSERVE_ADMIN_TOKEN: "" } }));
  OpenFeature.setProvider(
    "session-cli",
    new OFREPProvider({
      baseUrl: url,
      headers: [
        ["X-API-Key", DEV_KEY],
        ["X-Flagserve-Session", ID],
      ],
    }),
  );
  const client = OpenFeature.getClient("session-cli");
  await client.getBooleanValue("new-checkout", false, { targetingKey: "u1", email: "ann@example.com" });
  await client.getStringValue("banner", "?", { targetingKey: "u2" });
  await client.getBooleanValue("nope", false, { targetingKey: "u3" });
});
afterAll(async () => {
  await OpenFeature.close();
  await server?.stop();
  await dir?.remove();
});

/** Runs `flagserve session ...` to completion. */
const session = (args: string[], env: NodeJS.ProcessEnv = { FLAGSERVE_ADMIN_TOKEN: "" }) => runHere(["session", ...args], { env });
const token = () => ["--state-dir", dir.file("state")];
const at = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

describe("flagserve session", () => {
  it("show prints what the client asked as a table, oldest first", async () => {
    const shown = await session(["show", ID, url, ...token()]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]!.split(/\s{2,}/)).toEqual(["FLAG", "VARIANT", "VALUE", "REASON", "ERROR", "AT", "CONTEXT"]);
    const cells = lines.slice(1).map((line) => line.split(/\s{2,}/));
    expect(cells.map((row) => row.filter((cell) => !at.test(cell)))).toEqual([
      ["new-checkout", "on", "true", "TARGETING_MATCH", "-", '{"targetingKey":"u1","email":"ann@example.com"}'],
      ["banner", "blue", '"blue"', "STATIC", "-", '{"targetingKey":"u2"}'],
      ["nope", "-", "-", "ERROR", "FLAG_NOT_FOUND", '{"targetingKey":"u3"}'],
    ]);
    // Columns line up: every row's AT starts where the header's does.
    const column = lines[0]!.indexOf("AT");
    for (const line of lines.slice(1)) expect(line.slice(column)).toMatch(new RegExp(`^${at.source}`));
  });

  it("show escapes control characters from flag keys and contexts (no screen clearing, titles or fake rows)", async () => {
    const hostileKey = "\u001b[2J\u001b]0;pwned\u0007\n\u001b[32mfake";
    const res = await fetch(`${url}/ofrep/v1/evaluate/flags/${encodeURIComponent(hostileKey)}`, {
      method: "POST",
      headers: { "x-api-key": DEV_KEY, "x-flagserve-session": "hostile" },
      body: JSON.stringify({ context: { targetingKey: "\u009b31m\u202e" } }),
    });
    expect(res.status).toBe(404);
    const shown = await session(["show", "hostile", url, ...token()]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(shown.stdout.trimEnd().split("\n")).toHaveLength(2); // the header and one row: the newline did not make a row
    expect(shown.stdout).toContain("\\u001b[2J\\u001b]0;pwned\\u0007\\u000a\\u001b[32mfake");
    expect(shown.stdout).toContain('{"targetingKey":"\\u009b31m\\u202e"}');
    await session(["clear", "hostile", url, ...token()]);
  });

  it("show --json prints the admin API's JSON", async () => {
    const shown = await session(["show", ID, url, "--json", ...token()]);
    expect(shown.code).toBe(0);
    const body = JSON.parse(shown.stdout);
    const adminToken = (await readFile(dir.file("state/admin-token"), "utf8")).trim();
    const direct = await fetch(`${url}/api/v1/admin/sessions/${encodeURIComponent(ID)}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(body).toEqual(await direct.json());
    expect(body.dropped).toBe(0);
    expect(body.evaluations.map((e: { flagKey: string }) => e.flagKey)).toEqual(["new-checkout", "banner", "nope"]);
  });

  it("list shows the session with its count; clear forgets it; an unknown session shows as empty", async () => {
    const list = await session(["list", url, ...token()]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      new RegExp(`^ID\\s+EVALUATIONS\\s+DROPPED\\s+LAST ACTIVITY\\n${ID.replace("/", "\\/")}\\s+3\\s+0\\s+${at.source}\\n$`),
    );
    expect(JSON.parse((await session(["list", url, "--json", ...token()])).stdout).sessions).toHaveLength(1);

    expect(await session(["clear", ID, url, ...token()])).toMatchObject({ code: 0, stdout: `${ID}  cleared\n` });
    expect(await session(["clear", ID, url, ...token()])).toMatchObject({ code: 0, stdout: `${ID}  had no evaluations\n` });
    expect(await session(["show", ID, url, ...token()])).toMatchObject({ code: 0, stdout: `session ${ID}: no evaluations recorded\n` });
    expect(JSON.parse((await session(["show", ID, url, "--json", ...token()])).stdout)).toEqual({
      evaluations: [],
      contexts: {},
      dropped: 0,
    });
    expect(await session(["list", url, ...token()])).toMatchObject({ code: 0, stdout: "" });
  });

  it("exit 1 with the reason for a wrong or missing token, a bad id, or no server; exit 2 for usage errors", async () => {
    const wrong = await session(["show", ID, url], { FLAGSERVE_ADMIN_TOKEN: "not-the-token" });
    expect(wrong).toMatchObject({ code: 1, stdout: "" });
    expect(wrong.stderr).toBe("flagserve session: 401 UNAUTHORIZED: wrong admin token\n");
    const missing = await session(["show", ID, url, "--state-dir", dir.file("nowhere")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no admin token");
    const bad = await session(["show", "two words", url, ...token()]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("400 INVALID_SESSION");

    const port = await freePort();
    const down = await session(["show", ID, `http://127.0.0.1:${port}`, "--admin-token", "x"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`flagserve session: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`);

    expect((await session(["show"])).code).toBe(2);
    expect((await session(["show", ID, "ftp://x"])).code).toBe(2);
    expect((await session(["show", ID, url, "--format", "csv"])).code).toBe(2);
  });
});

describe("formatSession", () => {
  it("says how many older evaluations the session dropped, after the table", () => {
    const entry = { flagKey: "f", variant: "on", value: { a: [1] }, reason: "STATIC", contextId: "1", at: "2026-01-01T00:00:00.000Z" };
    expect(formatSession("s", { evaluations: [entry], contexts: { "1": {} }, dropped: 12 }).split("\n")).toEqual([
      "FLAG  VARIANT  VALUE      REASON  ERROR  AT                        CONTEXT",
      'f     on       {"a":[1]}  STATIC  -      2026-01-01T00:00:00.000Z  {}',
      "(12 older evaluations were dropped: a session keeps its newest 10 000, within 4 MiB)",
    ]);
  });
});
