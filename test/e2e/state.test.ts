/**
 * State a server can trust (docs/state.md): one private directory per configuration, nothing
 * adopted from another user, the admin token sent only to the server that wrote it, failed
 * admin logins limited, replaced keys revocable at once, and probes that name nothing to a
 * foreign Host.
 */
import { chmod, chown, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFlagServer, type FlagServer } from "../../src/index.js";
import { FailedAuthLimiter, limitSource } from "../../src/admin/auth-limit.js";
import { PROOF_PATH } from "../../src/admin/paths.js";
import { newNonce, proofMatches } from "../../src/admin/proof.js";
import { readServerRecords } from "../../src/admin/records.js";
import { readAdminToken } from "../../src/admin/token.js";
import { connectionOf } from "../../src/cli/admin-client.js";
import { defaultStateDir, StateDirError } from "../../src/store/state-dir.js";
import { rawRequest } from "../admin/helpers.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { until } from "../helpers/wait.js";
import type { Logger } from "../../src/log/logger.js";

const NO_KEY = `flags:\n  banner:\n    variants: { "on": true, "off": false }\n    defaultVariant: "on"\n`;
const withKey = (key: string) => `apiKey: ${key}\n${NO_KEY}`;
const OTHER_UID = 65534;
const isRoot = process.getuid?.() === 0;

let dir: TempDir;
const savedXdg = process.env.XDG_STATE_HOME;
beforeAll(async () => {
  dir = await tempDir("flagserve-state-");
  process.env.XDG_STATE_HOME = dir.file("xdg"); // the default state directories go here
});
afterAll(() => {
  if (savedXdg === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = savedXdg;
});

const servers: FlagServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});
async function start(options: Parameters<typeof createFlagServer>[0]): Promise<FlagServer> {
  const server = await createFlagServer(options);
  servers.push(server);
  return server;
}

/** A logger that keeps its lines. */
function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, info: keep("info"), warn: keep("warn"), error: keep("error") };
}

const evaluate = (server: FlagServer, key: string) =>
  fetch(`${server.url}/ofrep/v1/evaluate/flags/banner`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: "{}",
  }).then((r) => r.status);

describe("one state directory per configuration", () => {
  it("sibling configurations a/ and b/ get their own keys, token and directory (they shared $TMPDIR/.flagserve)", async () => {
    await dir.write("sib/a/dev.yaml", NO_KEY);
    await dir.write("sib/b/dev.yaml", NO_KEY);
    const [a, b] = await Promise.all([start({ config: dir.file("sib/a") }), start({ config: dir.file("sib/b") })]);
    expect(a.keys.dev).toMatch(/^fs_dev_/);
    expect(b.keys.dev).not.toBe(a.keys.dev);
    expect(b.adminToken).not.toBe(a.adminToken);
    expect(await evaluate(a, b.keys.dev!)).toBe(401);
    expect(await evaluate(b, a.keys.dev!)).toBe(401);
    const stateA = defaultStateDir(dir.file("sib/a"));
    expect(stateA.startsWith(dir.file("xdg/flagserve/a-"))).toBe(true);
    expect(JSON.parse(await readFile(join(stateA, "keys.json"), "utf8"))).toEqual({ dev: a.keys.dev });
    expect(await readAdminToken(stateA)).toBe(a.adminToken);
  });

  it.runIf(isRoot)("refuses to start on a keys.json planted by another user in its state directory, saying why", async () => {
    await dir.write("planted/flags/dev.yaml", NO_KEY);
    const state = defaultStateDir(dir.file("planted/flags"));
    await mkdir(state, { recursive: true, mode: 0o700 });
    await writeFile(join(state, "keys.json"), '{"dev":"planted-key-0123"}\n', { mode: 0o644 });
    await chown(join(state, "keys.json"), OTHER_UID, OTHER_UID);
    const refused = createFlagServer({ config: dir.file("planted/flags") });
    await expect(refused).rejects.toBeInstanceOf(StateDirError);
    await expect(refused).rejects.toThrow(/refusing state file .*keys\.json: it belongs to another user/);
  });

  it("does not take a keys.json others may write: the swap is refused and the key stays", async () => {
    await dir.write("swap/flags/dev.yaml", NO_KEY);
    const logger = recorder();
    const state = dir.file("swap/state");
    const server = await start({ config: dir.file("swap/flags"), stateDir: state, logger });
    const key = server.keys.dev!;
    await writeFile(join(state, "keys.json"), '{"dev":"swapped-key-0123"}\n');
    await chmod(join(state, "keys.json"), 0o666);
    await until("the reload refuses the file", () =>
      logger.lines.some((l) => /refusing state file .*keys\.json: other users may write it/.test(l)),
    );
    expect(server.keys.dev).toBe(key);
    expect(await evaluate(server, "swapped-key-0123")).toBe(401);
    expect(await evaluate(server, key)).toBe(200);
    if (!isRoot) return;
    // Nor one another user put there (private mode, their file).
    await writeFile(join(state, "other.json"), '{"dev":"their-key-0123"}\n', { mode: 0o600 });
    await chown(join(state, "other.json"), OTHER_UID, OTHER_UID);
    await rename(join(state, "other.json"), join(state, "keys.json"));
    await until("the reload refuses their file", () =>
      logger.lines.some((l) => /refusing state file .*keys\.json: it belongs to another user/.test(l)),
    );
    expect(await evaluate(server, "their-key-0123")).toBe(401);
    expect(await evaluate(server, key)).toBe(200);
  });
});

describe("the admin token goes only where it belongs", () => {
  let server: FlagServer;
  let other: FlagServer;
  const state = () => dir.file("bound/state");
  const urlsIn = async (stateDir: string) => (await readServerRecords(stateDir)).map((r) => r.url);
  beforeAll(async () => {
    await dir.write("bound/flags/dev.yaml", NO_KEY);
    await dir.write("bound/other/dev.yaml", NO_KEY);
    server = await start({ config: dir.file("bound/flags"), stateDir: state() });
    other = await start({ config: dir.file("bound/other") }); // its default state directory, under $XDG_STATE_HOME
  });

  it("the server records itself (URL and process) beside the token it keeps", async () => {
    expect(await readServerRecords(state())).toEqual([
      { url: server.url, pid: process.pid, started: expect.any(String), name: `server-${process.pid}-${new URL(server.url).port}.json` },
    ]);
    expect(await readAdminToken(state())).toBe(server.adminToken);
  });

  it("a state token is sent to the recorded server that proves it holds it, and refused for another --url; a given token goes where it is told", async () => {
    const target = (flags: Parameters<typeof connectionOf>[0]) =>
      connectionOf(flags).then(({ url, token, agent, notes }) => (agent?.destroy(), { url, token, proven: agent !== undefined, notes }));
    expect(await target({ stateDir: state() })).toEqual({ url: server.url, token: server.adminToken, proven: true, notes: [] });
    expect(await target({ stateDir: state(), url: server.url.replace("127.0.0.1", "localhost") })).toMatchObject({
      token: server.adminToken,
      proven: true,
    });
    await expect(connectionOf({ stateDir: state(), url: other.url })).rejects.toThrow(
      `not sending the admin token kept in ${state()} to ${other.url}: it belongs to the server at ${server.url}`,
    );
    expect(await target({ stateDir: state(), url: other.url, adminToken: other.adminToken })).toEqual({
      url: other.url,
      token: other.adminToken,
      proven: false,
      notes: [],
    });
    // Found by its URL among the per-user state directories when --url names it and no --state-dir says where.
    expect(await target({ url: other.url })).toMatchObject({ url: other.url, token: other.adminToken, proven: true });
    await expect(connectionOf({ stateDir: dir.file("bound/nowhere") })).rejects.toThrow(/^no admin token for a running server/);
  });

  it("the proof answers for the token and the address the request arrived at, and asks no token", async () => {
    const nonce = newNonce();
    const answer = await fetch(`${server.url}${PROOF_PATH}?nonce=${nonce}`);
    expect(answer.status).toBe(200);
    const { proof } = (await answer.json()) as { proof: string };
    const end = `127.0.0.1:${new URL(server.url).port}`;
    expect(proofMatches(proof, server.adminToken!, nonce, end)).toBe(true);
    expect(proofMatches(proof, other.adminToken!, nonce, end)).toBe(false); // another token
    expect(proofMatches(proof, server.adminToken!, nonce, "127.0.0.1:1")).toBe(false); // another address
    expect(proofMatches(proof, server.adminToken!, newNonce(), end)).toBe(false); // another challenge
    expect((await fetch(`${server.url}${PROOF_PATH}?nonce=short`)).status).toBe(400);
  });

  it("the record goes when the server stops, and only its own", async () => {
    await dir.write("gone/flags/dev.yaml", NO_KEY);
    const first = await createFlagServer({ config: dir.file("gone/flags"), stateDir: dir.file("gone/state") });
    const second = await createFlagServer({ config: dir.file("gone/flags"), stateDir: dir.file("gone/state") });
    expect(await urlsIn(dir.file("gone/state"))).toEqual([first.url, second.url]);
    await second.close();
    expect(await urlsIn(dir.file("gone/state"))).toEqual([first.url]);
    await first.close();
    expect(await urlsIn(dir.file("gone/state"))).toEqual([]);
  });

  it("a given token (option or environment) is not recorded, and one shorter than 16 characters is refused", async () => {
    await dir.write("given/flags/dev.yaml", NO_KEY);
    const given = await start({ config: dir.file("given/flags"), stateDir: dir.file("given/state"), adminToken: "a-token-of-16-ch" });
    expect(given.adminToken).toBe("a-token-of-16-ch");
    expect(await urlsIn(dir.file("given/state"))).toEqual([]);
    await expect(
      createFlagServer({ config: dir.file("given/flags"), stateDir: dir.file("given/state2"), adminToken: "short-token" }),
    ).rejects.toThrow("--admin-token: an admin token must be at least 16 characters long (this one has 11)");
  });
});

describe("failed admin authentications", () => {
  it("are limited per client address: 429 with Retry-After, even for the right token, until the window ends", async () => {
    await dir.write("limit/flags/dev.yaml", NO_KEY);
    const server = await start({ config: dir.file("limit/flags"), stateDir: dir.file("limit/state") });
    const call = (token: string) => fetch(`${server.url}/api/v1/admin/environments`, { headers: { authorization: `Bearer ${token}` } });
    const statuses = [];
    for (let i = 0; i < 25; i++) statuses.push((await call(`wrong-${i}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    const blocked = await call(server.adminToken!);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await blocked.json()).errorCode).toBe("TOO_MANY_REQUESTS");
  });

  it("from every loopback address count as one source: guesses from 127.0.0.2, 127.0.0.3, ... are limited together", async () => {
    await dir.write("limit-lo/flags/dev.yaml", NO_KEY);
    const server = await start({ config: dir.file("limit-lo/flags"), stateDir: dir.file("limit-lo/state") });
    const statuses = [];
    for (let i = 0; i < 25; i++) {
      const guess = await rawRequest(`${server.url}/api/v1/admin/environments`, {
        headers: { authorization: `Bearer wrong-${i}` },
        localAddress: `127.0.${i}.${i + 2}`, // another address of the loopback network each time
      });
      statuses.push(guess.status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
    const blocked = await rawRequest(`${server.url}/api/v1/admin/environments`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
      localAddress: "127.1.2.3",
    });
    expect(blocked.status).toBe(429);
    expect(JSON.parse(blocked.body).errorDetails).toMatch(
      /^too many failed admin authentications from 127\.1\.2\.3 \(counted with all of loopback\)/,
    );
  });

  it("are counted by source: loopback as one, an IPv4-mapped address as its IPv4 address, IPv6 by its /64", () => {
    for (const address of ["127.0.0.1", "127.200.3.4", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.9", "::ffff:7f00:2"])
      expect(limitSource(address)).toBe("loopback");
    expect(limitSource("10.1.2.3")).toBe("10.1.2.3");
    expect(limitSource("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(limitSource("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(limitSource("2001:DB8:1:2:ffff:1:2:3")).toBe("2001:db8:1:2::/64");
    expect(limitSource("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(limitSource("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(limitSource("not-an-address")).toBe("not-an-address");
    const limiter = new FailedAuthLimiter({ maxFailures: 3 });
    for (let i = 1; i <= 3; i++) limiter.fail(`2001:db8:1:2::${i}`);
    expect(limiter.retryAfter("2001:db8:1:2:ffff::9")).toBeGreaterThan(0);
    expect(limiter.retryAfter("2001:db8:1:3::1")).toBeUndefined();
  });

  it("are remembered for a bounded number of addresses, and forgotten when the window ends", () => {
    let now = 0;
    const limiter = new FailedAuthLimiter({ maxFailures: 2, windowMs: 1000, maxClients: 3, now: () => now });
    for (let i = 0; i < 100; i++) limiter.fail(`10.0.0.${i}`);
    expect(limiter.size).toBe(3);
    limiter.fail("a");
    expect(limiter.retryAfter("a")).toBeUndefined();
    limiter.fail("a");
    expect(limiter.retryAfter("a")).toBe(1);
    now = 1000;
    expect(limiter.retryAfter("a")).toBeUndefined();
  });
});

describe("keys replaced in the file", () => {
  it("keep working for the grace, until POST /api/v1/admin/keys/ENV/revoke-old ends it", async () => {
    await dir.write("revoke/flags/dev.yaml", withKey("old-key-0123456"));
    const server = await start({ config: dir.file("revoke/flags"), stateDir: dir.file("revoke/state") });
    await writeFile(dir.file("revoke/flags/dev.yaml"), withKey("new-key-0123456"));
    await until("the new key works", async () => (await evaluate(server, "new-key-0123456")) === 200);
    expect(await evaluate(server, "old-key-0123456")).toBe(200); // the grace (default one hour)
    const revoke = (env: string) =>
      fetch(`${server.url}/api/v1/admin/keys/${env}/revoke-old`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.adminToken}` },
      });
    const response = await revoke("dev");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ environment: "dev", revoked: 1 });
    expect(await evaluate(server, "old-key-0123456")).toBe(401);
    expect(await evaluate(server, "new-key-0123456")).toBe(200);
    expect(await (await revoke("dev")).json()).toEqual({ environment: "dev", revoked: 0 });
    expect((await revoke("nope")).status).toBe(404);
  });
});

describe("probes asked with a foreign Host (a DNS-rebinding page)", () => {
  it("/readyz and /metrics name no file, flag or variant", async () => {
    await dir.write("probe/flags/dev.yaml", withKey("probe-key-0123"));
    const server = await start({ config: dir.file("probe/flags"), stateDir: dir.file("probe/state") });
    expect(await evaluate(server, "probe-key-0123")).toBe(200);
    await dir.write("probe/flags/broken.yaml", "flags: [");
    const port = new URL(server.url).port;
    const readyz = () => rawRequest(`${server.url}/readyz`, { headers: { host: `localhost:${port}` } });
    await until("the broken file is seen", async () => (await readyz()).body.includes("broken.yaml"));
    const foreign = await rawRequest(`${server.url}/readyz`, { headers: { host: `evil.example:${port}` } });
    expect(JSON.parse(foreign.body)).toEqual({ status: "degraded", environments: 1 });
    const localMetrics = await rawRequest(`${server.url}/metrics`, { headers: { host: `127.0.0.1:${port}` } });
    expect(localMetrics.body).toContain('flag="banner"');
    const foreignMetrics = await rawRequest(`${server.url}/metrics`, { headers: { host: `evil.example:${port}` } });
    expect(foreignMetrics.status).toBe(200);
    expect(foreignMetrics.body).toContain("flagserve_environments 1");
    for (const secret of ["banner", "broken", "dev", dir.path]) expect(foreignMetrics.body + foreign.body).not.toContain(secret);
  });
});
