/** `flagserve serve` output: the start-up lines, --json-logs, --quiet, --https and --public. */
import { readdir, readFile } from "node:fs/promises";
import { request } from "node:https";
import { networkInterfaces } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli, startCli } from "../helpers/cli.js";
import { OFREP_FIXTURE, TEST_KEY } from "../helpers/fixtures.js";
import { cleanupAfterEach, run } from "./run.js";

const t = cleanupAfterEach();
const NO_KEY = `flags:\n  f:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;
const BAD = `flags:\n  f:\n    state: MAYBE\n    variants: { a: 1 }\n    defaultVariant: a\n`;

/** POST over HTTPS, accepting the server's self-signed certificate. */
function httpsPost(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers, rejectUnauthorized: false }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Opens the event stream and closes it at once: the server logs both (info lines). */
async function touchStream(url: string, key: string) {
  const abort = new AbortController();
  const res = await fetch(`${url}/api/v1/flags/events`, {
    headers: { "x-api-key": key, accept: "text/event-stream" },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  abort.abort();
}

/** Runs a printed `curl` command line as the same request with fetch (-X, -H, -d, -k and a URL). */
async function fetchCurl(command: string): Promise<Response> {
  const words = (command.match(/(?:'[^']*'|\\.|[^\s'\\])+/g) ?? []).map((w) =>
    w.replace(/'([^']*)'|\\(.)/g, (_, quoted, escaped) => quoted ?? escaped),
  );
  expect(words.shift()).toBe("curl");
  const init: RequestInit & { headers: Record<string, string> } = { method: "GET", headers: {} };
  let url = "";
  while (words.length > 0) {
    const word = words.shift()!;
    if (word === "-X") init.method = words.shift()!;
    else if (word === "-H") {
      const [name, ...value] = words.shift()!.split(":");
      init.headers[name!.trim()] = value.join(":").trim();
    } else if (word === "-d") init.body = words.shift()!;
    else if (word.startsWith("-")) throw new Error(`unexpected curl option ${word}`);
    else url = word;
  }
  return fetch(url, init);
}

describe("flagserve serve (start-up output)", () => {
  it("the banner's try command works on the bundled example: every flag answers, none with TARGETING_KEY_MISSING", async () => {
    const dir = await t.dir();
    const { cli, url } = await startCli(["--state-dir", dir.file("state")], { cwd: dir.path });
    t.track(cli);
    expect(cli.stdout()).toContain("(the bundled example;");
    const [, command] = cli.stdout().match(/^ {2}try: (curl .*)$/m)!;
    expect(command).toBe(
      `curl -X POST -H 'X-API-Key: dev-example-key' -d '{"context":{"targetingKey":"user-1"}}' ${url}/ofrep/v1/evaluate/flags`,
    );
    const response = await fetchCurl(command!);
    expect(response.status).toBe(200);
    const { flags } = (await response.json()) as { flags: { key: string; errorCode?: string; reason?: string }[] };
    expect(flags.map((f) => f.key).sort()).toEqual(["banner-color", "checkout-config", "dark-mode", "max-upload-mb", "new-checkout"]);
    expect(flags.filter((f) => f.errorCode !== undefined)).toEqual([]);
    expect(flags.find((f) => f.key === "banner-color")!.reason).toBe("SPLIT");
  });

  it("the bundled example keeps its generated keys in the per-user state directory, not in the package", async () => {
    const dir = await t.dir();
    const env = { XDG_STATE_HOME: dir.file("xdg") };
    const { cli } = await startCli([], { cwd: dir.path, env });
    t.track(cli);
    const production = cli.stdout().match(/environment production\s+key (\S+)/)![1]!;
    const [sub, ...others] = await readdir(dir.file("xdg/flagserve"));
    expect(others).toEqual([]);
    expect(sub).toMatch(/^flags\.example-[0-9a-f]{12}$/);
    expect(JSON.parse(await readFile(dir.file(`xdg/flagserve/${sub}/keys.json`), "utf8"))).toEqual({ production });
    const inPackage = await readFile(fileURLToPath(new URL("../../.flagserve/keys.json", import.meta.url)), "utf8").catch(() => "");
    expect(inPackage).not.toContain(production);
    // `keys` finds the same state directory.
    const keys = await run(["keys"], { cwd: dir.path, env });
    expect(keys.stdout).toContain(`production   ${production}  (state)`);
  });

  it("SIGINT, SIGTERM and SIGHUP each close the server and exit 0, releasing the port; an override answered 200 is in the file", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const token = "admin-token-for-signal-tests";
    // One server per signal, side by side.
    await Promise.all(
      (["SIGINT", "SIGTERM", "SIGHUP"] as const).map(async (signal) => {
        const overrides = dir.file(`overrides-${signal}.yaml`);
        const args = [dir.file("flags"), "--state-dir", dir.file(`state-${signal}`), "--overrides", overrides, "--admin-token", token];
        const { cli, url } = await startCli(args);
        t.track(cli);
        const put = await fetch(`${url}/api/v1/admin/environments/test/overrides/bool-flag`, {
          method: "PUT",
          headers: { authorization: `Bearer ${token}` },
          body: '{"state":"DISABLED"}',
        });
        expect(put.status, signal).toBe(200);
        // Signalled at once: the 200 was sent after the file was in place, and the process exits 0.
        expect(await cli.stop(signal), signal).toEqual({ code: 0, signal: null });
        expect(await readFile(overrides, "utf8"), signal).toContain("state: DISABLED");
        await expect(fetch(`${url}/healthz`), signal).rejects.toThrow();
      }),
    );
  });

  it("prints the URL, each environment with its key, a note per invalid file, then `ready <url>`", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/staging.yaml": NO_KEY, "flags/bad.yaml": BAD });
    const { cli, url } = await startCli([dir.file("flags"), "--allow-invalid", "--state-dir", dir.file("state")]);
    t.track(cli);
    const out = cli.stdout().split("\n");
    expect(out[0]).toMatch(new RegExp(`^flagserve \\d+\\.\\d+\\.\\d+\\S* serving ${dir.file("flags")}$`));
    expect(out[1]).toBe(`  ${url}`);
    // bad's only problem is inside flag f: the environment is served, f answers PARSE_ERROR
    expect(out[2]).toMatch(/^ {2}environment bad {6}key fs_bad_\S{24}$/);
    expect(out[3]).toMatch(/^ {2}environment staging {2}key fs_staging_\S{24}$/);
    expect(out[4]).toBe(`  environment test     key ${TEST_KEY}`);
    expect(out[5]).toMatch(new RegExp(`^ {2}dashboard http://localhost:${new URL(url).port}/#token=fsa_[A-Za-z0-9_-]{43}$`));
    expect(out[6]).toMatch(/^ {2}try: curl -X POST -H 'X-API-Key: fs_bad_\S{24}' -d '\{"context":\{"targetingKey":"user-1"\}\}' /);
    expect(out[7]).toBe(`ready ${url}`);
    expect(out[8]).toBe("");
    expect(cli.stderr()).toContain(`error: ${dir.file("flags/bad.yaml")}:3:12 flags.f.state: must be one of ENABLED, DISABLED`);
    expect(cli.stderr()).toContain(
      `warn: ${dir.file("flags/bad.yaml")}: 1 problem (listed above); environment bad is served; its flags with problems answer PARSE_ERROR`,
    );
    expect(cli.stderr()).toContain("warn: bad: flag f answers PARSE_ERROR until its problems are fixed");
    // an environment-level problem still keeps the whole environment out
    const worse = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/worse.yaml": `${NO_KEY}colour: red\n` });
    const second = await startCli([worse.file("flags"), "--allow-invalid", "--state-dir", worse.file("state")]);
    t.track(second.cli);
    expect(second.cli.stderr()).toContain(
      `warn: ${worse.file("flags/worse.yaml")}: 1 problem (listed above); environment worse is not served`,
    );
  });

  it("--json-logs: every line on stdout and stderr is a JSON record, with one per environment and a ready record", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/bad.yaml": BAD });
    const cli = t.track(runCli([dir.file("flags"), "--port", "0", "--allow-invalid", "--json-logs", "--state-dir", dir.file("state")]));
    const [, url] = await cli.waitFor(/"msg":"ready","url":"(http:[^"]+)"/);
    await touchStream(url!, TEST_KEY);
    await cli.waitFor(/stream closed/, "stderr");
    await cli.stop("SIGTERM");

    const parse = (text: string) =>
      text
        .split("\n")
        .filter((l) => l !== "")
        .map((line) => {
          const record = JSON.parse(line) as Record<string, unknown>;
          expect(record).toMatchObject({
            time: expect.stringMatching(/^\d{4}-.*Z$/),
            level: expect.stringMatching(/^(info|warn|error)$/),
            msg: expect.any(String),
          });
          return record;
        });
    const stdout = parse(cli.stdout());
    const stderr = parse(cli.stderr());
    expect(stdout.map((r) => r.msg)).toEqual(["serving", "listening", "environment", "environment", "dashboard", "ready"]);
    // The dashboard's URL without the admin token: a log collector keeps what it gets.
    expect(stdout.find((r) => r.msg === "dashboard")).toEqual(
      expect.objectContaining({ url: `${url.replace("127.0.0.1", "localhost")}/` }),
    );
    expect(cli.stdout()).not.toMatch(/token|fsa_/);
    expect(stdout).toContainEqual(expect.objectContaining({ msg: "environment", env: "test", key: TEST_KEY }));
    expect(stdout.at(-1)).toMatchObject({ level: "info", msg: "ready", url });
    expect(stderr).toContainEqual(expect.objectContaining({ level: "error", msg: expect.stringContaining("bad.yaml:3:12") }));
    expect(stderr).toContainEqual(expect.objectContaining({ level: "warn", env: "bad", file: dir.file("flags/bad.yaml"), problems: 1 }));
    expect(stderr).toContainEqual(expect.objectContaining({ level: "info", msg: expect.stringContaining("stream opened") }));
  });

  it("a PATH that does not exist: says so (not --allow-invalid), exit 1, with or without --allow-invalid", async () => {
    const dir = await t.dir({});
    const runs = [[], ["--allow-invalid"]].map((extra) => t.track(runCli([dir.file("nosuch.yaml"), "--port", "0", ...extra])));
    for (const failed of runs) {
      expect((await failed.exited).code).toBe(1);
      expect(failed.stdout()).toBe("");
      expect(failed.stderr()).toContain(`${dir.file("nosuch.yaml")}: path does not exist`);
      expect(failed.stderr()).not.toContain("--allow-invalid");
      expect(failed.stderr()).not.toContain(":0:0");
    }
  });

  it("--json-logs: start-up failures and usage errors are JSON lines too", async () => {
    const dir = await t.dir({ "flags/bad.yaml": BAD });
    const failed = t.track(runCli([dir.file("flags"), "--port", "0", "--json-logs"]));
    expect((await failed.exited).code).toBe(1);
    expect(failed.stdout()).toBe("");
    const records = failed
      .stderr()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records.at(-1)).toMatchObject({ level: "error", msg: expect.stringContaining("not serving: 1 problem") });

    const usage = t.track(runCli(["--port", "nope", "--json-logs"]));
    expect((await usage.exited).code).toBe(2);
    const lines = usage
      .stderr()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ level: "error", msg: expect.stringContaining("--port") });
  });

  it("--quiet: stdout is only the ready line; info lines are dropped, problems are not", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/bad.yaml": BAD });
    const { cli, url } = await startCli([dir.file("flags"), "--allow-invalid", "--quiet", "--state-dir", dir.file("state")]);
    t.track(cli);
    await touchStream(url, TEST_KEY);
    // A reload logs an info line too; wait until it is applied.
    await dir.write("flags/test.yaml", OFREP_FIXTURE.replace("flagSetId: fixture", "flagSetId: changed"));
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${url}/ofrep/v1/evaluate/flags/bool-flag`, { method: "POST", headers: { "x-api-key": TEST_KEY } });
      if (((await res.json()) as { metadata: { flagSetId: string } }).metadata.flagSetId === "changed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(cli.stdout()).toBe(`ready ${url}\n`);
    expect(cli.stderr()).toContain("bad.yaml:3:12");
    expect(cli.stderr()).not.toContain("stream opened");
    const stderrLines = cli
      .stderr()
      .split("\n")
      .filter((l) => l !== "");
    expect(stderrLines.filter((l) => !/^(error|warn): /.test(l))).toEqual([]);
  });

  it("--https: self-signed HTTPS on the ready URL, and `events --insecure` follows it", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const { cli, url } = await startCli([dir.file("flags"), "--https", "--state-dir", dir.file("state")]);
    t.track(cli);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.stdout()).toContain("try: curl -k ");

    const res = await httpsPost(`${url}/ofrep/v1/evaluate/flags/bool-flag`, { "x-api-key": TEST_KEY });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ key: "bool-flag", value: true });
    // A client that checks certificates refuses it: it really is self-signed TLS.
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();

    const events = t.track(runCli(["events", url, "--key", TEST_KEY, "--insecure"]));
    await events.waitFor(/^connected to https:/m, "stderr");
    expect(await events.stop("SIGINT")).toEqual({ code: 0, signal: null });
  });

  it("--public: listens on all interfaces, prints the network URL(s), and the ready URL works locally", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const { cli, url } = await startCli([dir.file("flags"), "--public", "--state-dir", dir.file("state")]);
    t.track(cli);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const network = [...cli.stdout().matchAll(/^ {2}(http:\/\/\S+) {2}\(network\)$/gm)].map((m) => m[1]!);
    if (network.length === 0) {
      expect(cli.stderr()).toContain("no network address found");
    } else {
      expect(cli.stdout()).toContain("▀▀▀"); // the QR code
      const health = await fetch(`${network[0]}/healthz`);
      expect(health.status).toBe(200);
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("--host beyond loopback: a warning with every address it is reachable at, flagd's port too; the admin API still needs the token there", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const args = [dir.file("flags"), "--host", "0.0.0.0", "--flagd-port", "0", "-q", "--state-dir", dir.file("state")];
    const { cli, url } = await startCli(args);
    t.track(cli);
    const warning = cli
      .stderr()
      .match(
        /^warn: --host 0\.0\.0\.0: other machines can reach this server at (.+), and the flagd port (?:at )?(.+); evaluations need an environment's key, the dashboard and admin API the admin token$/m,
      );
    expect(warning).not.toBeNull();
    const port = new URL(url).port;
    const interfaces = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === "IPv4" && !a.internal && a.mac !== "00:00:00:00:00:00" && !a.address.startsWith("169.254."));
    const addresses = interfaces.map((a) => `http://${a!.address}:${port}`);
    for (const address of addresses) expect(warning![1]).toContain(address);
    expect(warning![2]).toMatch(/\d+$/);
    const flagdPort = warning![2]!.match(/(\d+)$/)![1]!;
    expect(flagdPort).not.toBe(port);
    for (const a of interfaces) expect(warning![2]).toContain(`${a!.address}:${flagdPort}`);
    for (const base of [url, ...addresses]) expect((await fetch(`${base}/api/v1/admin/environments`)).status).toBe(401);
  });

  it("--host beyond loopback with --flagd-selector-by-name: the warning names the environments the flagd port serves without a key", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const args = [dir.file("flags"), "--host", "0.0.0.0", "--flagd-port", "0", "--flagd-selector-by-name", "test,staging", "-q"];
    const { cli } = await startCli([...args, "--state-dir", dir.file("state")]);
    t.track(cli);
    expect(cli.stderr()).toMatch(
      /^warn: --host 0\.0\.0\.0: other machines can reach this server at .+, and the flagd port (?:at )?.+; evaluations need an environment's key \(but anyone reaching the flagd port reads test, staging by name: --flagd-selector-by-name\), the dashboard and admin API the admin token$/m,
    );
  });

  it("--flagd-port: the banner's flagd line says what selects an environment, its name too for --flagd-selector-by-name", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const flagdLine = async (...byName: string[]) => {
      const { cli } = await startCli([dir.file("flags"), "--flagd-port", "0", ...byName, "--state-dir", dir.file("state")]);
      t.track(cli);
      return cli.stdout().match(/^ {2}flagd port \d+ (.*)$/m)?.[1];
    };
    expect(await flagdLine()).toBe("(gRPC, gRPC-Web, Connect; selector: an environment's key)");
    expect(await flagdLine("--flagd-selector-by-name", "test,staging")).toBe(
      "(gRPC, gRPC-Web, Connect; selector: an environment's key; test and staging also by name)",
    );
  });

  it("--host ::ffff:127.0.0.1 (loopback, IPv4-mapped) is loopback: no warning", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const { cli, url } = await startCli([dir.file("flags"), "--host", "::ffff:127.0.0.1", "-q", "--state-dir", dir.file("state")]);
    t.track(cli);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(cli.stderr()).not.toContain("other machines");
  });

  it("--admin-token (or FLAGSERVE_ADMIN_TOKEN) shorter than 16 characters: refused at start, exit 2", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const given = await run([dir.file("flags"), "--admin-token", "secret", "--state-dir", dir.file("state")]);
    expect(given.code).toBe(2);
    expect(given.stderr).toContain("an admin token must be at least 16 characters long (this one has 6)");
    const fromEnv = await run([dir.file("flags"), "--state-dir", dir.file("state")], { env: { FLAGSERVE_ADMIN_TOKEN: "letmein" } });
    expect(fromEnv.code).toBe(2);
  });
});
