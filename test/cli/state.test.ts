/**
 * The state the commands read (docs/state.md). A state directory or file that is not private is
 * refused by the server and by every command, on every read. The kept admin token goes only to a
 * recorded server that proves it holds it: one record per running server, a server removing only
 * its own; never a dead server's port, whatever listens there now; never another configuration's
 * server; several of one configuration named.
 */
import { execFile } from "node:child_process";
import { chmod, chown, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readServerRecords } from "../../src/admin/records.js";
import { readAdminToken } from "../../src/admin/token.js";
import { createFlagServer } from "../../src/index.js";
import { defaultStateDir } from "../../src/store/state-dir.js";
import { DEV_KEY, DEV_YAML } from "../admin/helpers.js";
import { BIN, runCli } from "../helpers/cli.js";
import { freePort } from "../helpers/ports.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const t = cleanupAfterEach();
const isRoot = process.getuid?.() === 0;
/** Another user of the machine (nobody), played by root as the attack pass did. */
const OTHER_UID = 65534;
const asOtherUser = (command: string[]) =>
  promisify(execFile)("setpriv", [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, "--clear-groups", ...command]);
/** No token from the environment running the tests: the commands read the kept one. */
const ENV = { FLAGSERVE_ADMIN_TOKEN: "" };

/** An HTTP server on `port` (0: any) that keeps the Authorization headers it is sent; `handle` answers. */
async function listener(
  port: number,
  handle?: (req: Parameters<Parameters<typeof createServer>[1]>[0], body: string) => Promise<[number, string]>,
) {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", async () => {
      const [status, text] = handle ? await handle(req, body) : [200, '{"overrides":{},"sessions":[]}'];
      res.writeHead(status, { "content-type": "application/json" }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  t.later(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens: () => seen.map((h) => h.authorization).filter(Boolean),
  };
}

/** Starts `flagserve ARGS` and waits for its ready URL. */
async function serve(args: string[], cwd?: string) {
  const cli = t.track(runCli([...args, "-q"], { cwd, env: ENV }));
  const [, url] = await cli.waitFor(/^ready (\S+)$/m);
  return { cli, url: url! };
}

const banner = (url: string) =>
  fetch(`${url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": DEV_KEY } }).then(
    async (r) => ((await r.json()) as { value: unknown }).value,
  );

describe("a server that is gone (SIGKILL)", () => {
  it("its port taken by another process: the token is not sent there, the record is ignored and said so, and the next server drops it", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const state = dir.file("state");
    const port = await freePort();
    const killed = await serve([dir.file("flags"), "--state-dir", state, "--port", String(port)]);
    const pid = killed.cli.child.pid!;
    killed.cli.child.kill("SIGKILL");
    await killed.cli.exited;
    const impostor = await listener(port);

    for (const command of [
      ["override", "list", "--state-dir", state],
      ["session", "list", "--state-dir", state],
    ]) {
      const result = await runHere(command, { env: ENV });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`ignoring the record of http://127.0.0.1:${port} (pid ${pid}) in ${state}: that server is gone`);
      expect(result.stderr).toMatch(/no running flagserve recorded itself in /);
    }
    expect(impostor.tokens()).toEqual([]);

    const next = await serve([dir.file("flags"), "--state-dir", state, "--port", "0"]);
    expect((await readServerRecords(state)).map((r) => r.pid)).toEqual([next.cli.child.pid]);
  });

  it("a process still running under the recorded id, or one relaying the challenge to the real server: no proof, no token", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const state = dir.file("state");
    const real = await serve([dir.file("flags"), "--state-dir", state, "--port", "0"]);
    // A relay: every request passed on to the real server, as a process on the old port could.
    const relayedAnswers: [string, number][] = [];
    const relay = await listener(0, async (req, body) => {
      const answer = await relayed(real.url, req.method!, req.url!, req.headers, body);
      relayedAnswers.push([new URL(req.url!, real.url).pathname, answer[0]]);
      return answer;
    });
    const other = await listener(0);
    for (const fake of [relay, other]) {
      // A record of this (running) test process at the fake's URL, beside the real server's.
      const record = `server-${process.pid}-${new URL(fake.url).port}.json`;
      await writeFile(join(state, record), JSON.stringify({ url: fake.url, pid: process.pid, started: new Date().toISOString() }), {
        mode: 0o600,
      });
      const result = await runHere(["override", "list", "--url", fake.url, "--state-dir", state], { env: ENV });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `ignoring the record of ${fake.url} (pid ${process.pid}) in ${state}: what answers there cannot prove it holds the token kept there`,
      );
      expect(fake.tokens()).toEqual([]);
    }
    // The relay did get the real server's proof: a proof for the real server's address, not its own.
    expect(relayedAnswers).toEqual([["/api/v1/admin/proof", 200]]);
    // The real one proves itself and gets the call.
    expect(await runHere(["override", "list", "--url", real.url, "--state-dir", state], { env: ENV })).toMatchObject({ code: 0 });
  });
});

describe("a recorded port where something else listens", () => {
  it("one that accepts connections and never answers, or answers without end: the record is ignored, saying why, and nothing hangs", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const state = dir.file("state");
    await serve([dir.file("flags"), "--state-dir", state, "--port", "0"]);
    // As a stopped (^Z) server's socket does: connections are accepted, nothing is ever answered.
    const held: Socket[] = [];
    const silent = createNetServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    t.later(() => new Promise((resolve) => (held.forEach((socket) => socket.destroy()), silent.close(resolve))));
    const endless = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const more = () => res.write("x".repeat(16 * 1024), () => !res.destroyed && more());
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    t.later(() => new Promise((resolve) => (endless.closeAllConnections(), endless.close(resolve))));

    for (const [server, why] of [
      [silent, "no answer in 5 s"],
      [endless, "an answer larger than 65536 bytes"],
    ] as const) {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await writeFile(
        join(state, `server-${process.pid}-${new URL(url).port}.json`),
        JSON.stringify({ url, pid: process.pid, started: new Date().toISOString() }),
        {
          mode: 0o600,
        },
      );
      const result = await runHere(["override", "list", "--url", url, "--state-dir", state], { env: ENV });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`ignoring the record of ${url} (pid ${process.pid}) in ${state}: ${why}`);
    }
  }, 20_000);
});

describe("a server started with --https (a self-signed certificate)", () => {
  it("gets the kept token once it proves itself; a token given for its URL is not sent, as TLS cannot trust it", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const state = dir.file("state");
    const { url } = await serve([dir.file("flags"), "--state-dir", state, "--port", "0", "--https"]);
    expect(await runHere(["override", "list", "--state-dir", state], { env: ENV })).toMatchObject({ code: 0 });
    const given = await runHere(["override", "list", "--url", url, "--admin-token", (await readAdminToken(state))!], { env: ENV });
    expect(given.code).toBe(1);
    expect(given.stderr).toMatch(new RegExp(`^flagserve override: cannot reach ${url}: \\S*CERT`));
  });
});

/** Passes a request on to `url` and returns its answer. */
function relayed(url: string, method: string, path: string, headers: IncomingHttpHeaders, body: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(`${url}${path}`, { method, headers: { ...headers, host: target.host } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve([res.statusCode ?? 502, text]));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("servers of one configuration", () => {
  it("a second one started and stopped beside the first (a test fixture on ./flags) leaves the first one's record: override finds it", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const developer = await serve(["--port", "0"], dir.path);
    const fixture = await createFlagServer({ config: dir.file("flags") });
    expect(fixture.adminToken).toBeDefined();
    await fixture.close();
    const set = await runHere(["override", "set", "banner", "green", "--env", "dev"], { cwd: dir.path, env: ENV });
    expect(set).toMatchObject({ code: 0, stdout: "dev  banner  variant green\n", stderr: "" });
    expect(await banner(developer.url)).toBe("green");
  });

  it("several running: the command names them and asks which; --url picks one", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const first = await serve(["--port", "0"], dir.path);
    const second = await createFlagServer({ config: dir.file("flags") });
    t.later(() => second.close());
    const both = await runHere(["override", "list"], { cwd: dir.path, env: ENV });
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      `flagserve override: 2 servers of this configuration are running (${first.url} (pid ${first.cli.child.pid}), ${second.url} (pid ${process.pid})): say which by its URL (--url; for session, its URL argument)\n`,
    );
    const picked = await runHere(["override", "set", "banner", "green", "--env", "dev", "--url", second.url], { cwd: dir.path, env: ENV });
    expect(picked.code).toBe(0);
    expect([await banner(second.url), await banner(first.url)]).toEqual(["green", "blue"]);
  });

  it("none of this configuration running: another configuration's server is never used", async () => {
    const mine = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const theirs = await t.dir({ "flags/dev.yaml": DEV_YAML });
    const other = await serve(["--port", "0"], theirs.path);
    const result = await runHere(["override", "set", "banner", "green", "--env", "dev"], { cwd: mine.path, env: ENV });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `flagserve override: no admin token for a running server: no admin token is kept in ${defaultStateDir(mine.file("flags"))}`,
    );
    expect(result.stderr).not.toContain(other.url);
    expect(await banner(other.url)).toBe("blue");
  });
});

describe("a state directory that is not private", () => {
  /** A configuration whose state directory has a kept token and keys.json, as after a first run. */
  async function used() {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML, "flags/qa.yaml": "flags: {}\n" });
    const state = dir.file("state");
    const first = await serve([dir.file("flags"), "--state-dir", state, "--port", "0"]);
    await first.cli.stop();
    expect((await readFile(join(state, "keys.json"), "utf8")).length).toBeGreaterThan(0); // qa's generated key
    expect((await readFile(join(state, "admin-token"), "utf8")).length).toBeGreaterThan(16);
    return { dir, state };
  }

  it("others may write it (0777): the server does not start, and every command exits 1, saying why", async () => {
    const { dir, state } = await used();
    await chmod(state, 0o777);
    const refusal = `refusing state directory ${state}: other users may write it (mode 0777); fix it with: chmod 700 ${state}`;
    const server = await run([dir.file("flags"), "--state-dir", state, "--port", "0"], { env: ENV });
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(`error: not serving: ${refusal}`);
    for (const [name, args] of [
      ["keys list", ["keys", "list", dir.file("flags"), "--state-dir", state]],
      ["keys revoke", ["keys", "revoke", "dev", dir.file("flags"), "--state-dir", state]],
      ["keys rotate", ["keys", "rotate", "qa", dir.file("flags"), "--state-dir", state]],
      ["override", ["override", "list", "--state-dir", state]],
      ["session", ["session", "list", "--state-dir", state]],
    ] as const) {
      const result = await runHere([...args], { env: ENV });
      expect(result, name).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr, name).toContain(`flagserve ${name}: ${refusal}`);
    }
    // health without a URL reads the default configuration's directory for its server's record.
    const defaultState = defaultStateDir(dir.file("flags"));
    await mkdir(defaultState, { recursive: true, mode: 0o700 });
    await chmod(defaultState, 0o777);
    const health = await runHere(["health"], { cwd: dir.path, env: ENV });
    expect(health).toMatchObject({ code: 1, stdout: "" });
    expect(health.stderr).toContain(`flagserve health: refusing state directory ${defaultState}: other users may write it (mode 0777)`);
  });

  it.runIf(isRoot)("another user owns it (its files ours): refused too", async () => {
    const { dir, state } = await used();
    await chown(state, OTHER_UID, OTHER_UID);
    const server = await run([dir.file("flags"), "--state-dir", state, "--port", "0"], { env: ENV });
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(
      `error: not serving: refusing state directory ${state}: it belongs to another user (uid ${OTHER_UID}, you are 0)`,
    );
    expect((await runHere(["override", "list", "--state-dir", state], { env: ENV })).code).toBe(1);
  });

  it.runIf(isRoot)("another user renamed a file of ours over admin-token: the next start takes no token from it", async () => {
    const { dir, state } = await used();
    await chmod(dir.path, 0o711); // the other user can reach the state directory (not list the temporary one)
    await chmod(state, 0o777); // as it was when the attack pass found it
    await writeFile(join(state, "notes"), "http://127.0.0.1:8080\n", { mode: 0o600 });
    await asOtherUser(["mv", join(state, "notes"), join(state, "admin-token")]);
    expect((await stat(join(state, "admin-token"))).uid).toBe(0); // our file, their rename
    const server = await run([dir.file("flags"), "--state-dir", state, "--port", "0"], { env: ENV });
    expect(server.code).toBe(1);
    expect(server.stdout).not.toContain("#token=http");
    expect(server.stderr).toContain(`refusing state directory ${state}: other users may write it (mode 0777)`);
  });

  it("a kept token too short to be one (2 characters) is refused, not adopted", async () => {
    const { dir, state } = await used();
    await writeFile(join(state, "admin-token"), "ab\n", { mode: 0o600 });
    const server = await run([dir.file("flags"), "--state-dir", state, "--port", "0"], { env: ENV });
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(
      `error: not serving: refusing state file ${join(state, "admin-token")}: it does not hold an admin token (an admin token must be at least 16 characters long (this one has 2))`,
    );
    expect((await runHere(["override", "list", "--state-dir", state], { env: ENV })).code).toBe(1);
  });

  it("$XDG_STATE_HOME/flagserve and the state directory are made 0700 under umask 000", async () => {
    const dir = await t.dir({ "flags/dev.yaml": DEV_YAML, "flags/qa.yaml": "flags: {}\n" });
    const xdg = dir.file("xdg");
    await mkdir(xdg);
    const keys = await promisify(execFile)("sh", ["-c", `umask 000 && exec "${process.execPath}" "${BIN}" keys list flags`], {
      cwd: dir.path,
      env: { ...process.env, XDG_STATE_HOME: xdg },
    });
    expect(keys.stdout).toMatch(/^qa {3}fs_qa_/m);
    const state = defaultStateDir(dir.file("flags"), { XDG_STATE_HOME: xdg });
    expect((await stat(join(xdg, "flagserve"))).mode & 0o777).toBe(0o700);
    expect((await stat(state)).mode & 0o777).toBe(0o700);
    expect((await stat(join(state, "keys.json"))).mode & 0o777).toBe(0o600);
  });
});
