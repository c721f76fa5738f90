/** `flagserve keys [list]`, `keys rotate ENV`, `keys dir` and `keys revoke ENV`: output and exit codes. */
import { serveFlagsDir } from "../helpers/server.js";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { TEST_KEY, OFREP_FIXTURE } from "../helpers/fixtures.js";
import { startCli } from "../helpers/cli.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const t = cleanupAfterEach();
/** Polls `check` until it holds (at most 10 s). */
async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met within 10 s");
}
const NO_KEY = `flags:\n  f:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;

describe("flagserve keys", () => {
  it("lists each environment with its key and where it is kept; `keys` alone is `keys list`", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/staging.yaml": NO_KEY });
    const list = await runHere(["keys", "list", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(list.code).toBe(0);
    expect(list.stderr).toBe("");
    const [staging, test] = list.stdout.trim().split("\n");
    expect(staging).toMatch(/^staging {2}fs_staging_\S{24} {2}\(state\)$/);
    expect(test).toBe(`test     ${TEST_KEY}  (file)`);
    // The generated key is kept: listing again (the short form) gives the same one.
    const again = await runHere(["keys", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(again.stdout).toBe(list.stdout);
    expect(JSON.parse(await readFile(dir.file("state/keys.json"), "utf8")).staging).toBe(staging!.split(/\s+/)[1]);
  });

  it("exits 1 when an environment has problems, listing the others", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/bad.yaml": "flags: [" });
    const { code, stdout, stderr } = await runHere(["keys", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stdout).toContain(TEST_KEY);
    expect(stderr).toMatch(/^flags\/bad\.yaml:1:\d+ /m);
    expect(stderr).toContain("bad: not listed, it has problems");
  });

  it("rotate: a new key where the old one lived; unknown environment -> exit 1 with the known ones", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/staging.yaml": NO_KEY });
    const rotated = await runHere(["keys", "rotate", "test", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(rotated.code).toBe(0);
    const [, key] = rotated.stdout.match(/^test {2}(fs_test_\S+) {2}\(written to flags\/test\.yaml\)$/m)!;
    expect(await readFile(dir.file("flags/test.yaml"), "utf8")).toContain(`apiKey: ${key}\n`);

    const unknown = await runHere(["keys", "rotate", "prod", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toBe("flagserve keys rotate: cannot rotate the key of 'prod': no such environment (known: staging, test)\n");
  });
});

describe("flagserve keys rotate: how the file is written", () => {
  // Flow collections, quoting, comments and CRLF line endings: none of it may change.
  const FLOW = [
    "# test environment\r\n",
    "apiKey: old-key-0123456789   # rotate with flagserve keys rotate\r\n",
    "metadata: { team: web, version: 2 }\r\n",
    "flags:\r\n",
    "  f: { variants: { on: true, off: false }, defaultVariant: 'off', targeting: { if: [{ in: [{ var: email }, [a@x.io]] }, on, null] } }\r\n",
  ].join("");

  it("changes only the key's bytes: flow style, comments and line endings are kept", async () => {
    const dir = await t.dir({ "flags/test.yaml": FLOW });
    const rotated = await runHere(["keys", "rotate", "test", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(rotated.stderr).toBe("");
    expect(rotated.code).toBe(0);
    const [, key] = rotated.stdout.match(/^test {2}(fs_test_\S+) {2}/)!;
    expect(await readFile(dir.file("flags/test.yaml"), "utf8")).toBe(FLOW.replace("old-key-0123456789", key!));
  });

  it("keeps the quoting style of the old key, and the key of the right environment in a multi-environment file", async () => {
    const source = `environments:\n  dev: { apiKey: "dev-key-0123456789", flags: {} }\n  test:\n    apiKey: 'test-key-0123456789' # quoted\n    flags: {}\n`;
    const dir = await t.dir({ "flags.yaml": source });
    const rotated = await runHere(["keys", "rotate", "test", "flags.yaml", "--state-dir", "state"], { cwd: dir.path });
    expect(rotated.code).toBe(0);
    const [, key] = rotated.stdout.match(/^test {2}(fs_test_\S+) {2}/)!;
    expect(await readFile(dir.file("flags.yaml"), "utf8")).toBe(source.replace("'test-key-0123456789'", `'${key}'`));
  });

  it("writes through a symlink to the real file, keeps mode 0640, and a running server follows the new key", async () => {
    const dir = await t.dir({ "real/test.yaml": OFREP_FIXTURE });
    await mkdir(dir.file("flags"));
    await symlink(dir.file("real/test.yaml"), dir.file("flags/test.yaml"));
    await chmod(dir.file("real/test.yaml"), 0o640);
    const server = await serveFlagsDir(dir, { keyGraceSeconds: 0 });
    t.later(() => server.close());
    const { url } = server;

    const rotated = await runHere(["keys", "rotate", "test", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(rotated.code).toBe(0);
    const [, key] = rotated.stdout.match(/^test {2}(fs_test_\S+) {2}\(written to flags\/test\.yaml\)$/m)!;
    expect((await lstat(dir.file("flags/test.yaml"))).isSymbolicLink()).toBe(true);
    expect(await readlink(dir.file("flags/test.yaml"))).toBe(dir.file("real/test.yaml"));
    expect(await readFile(dir.file("real/test.yaml"), "utf8")).toBe(OFREP_FIXTURE.replace(TEST_KEY, key!));
    expect((await stat(dir.file("real/test.yaml"))).mode & 0o777).toBe(0o640);
    expect((await readdir(dir.file("real"))).sort()).toEqual(["test.yaml"]); // no temporary file left

    // The server watches the file through the link: it switches to the new key.
    const evaluate = (k: string) => fetch(`${url}/ofrep/v1/evaluate/flags/bool-flag`, { method: "POST", headers: { "x-api-key": k } });
    await until(async () => (await evaluate(key!)).status === 200);
    expect((await evaluate(TEST_KEY)).status).toBe(401);
  });

  it("a generated key: the state directory is private (0700), the state file too (0600), and rewritten so; one others may write is refused", async () => {
    const dir = await t.dir({ "flags/staging.yaml": NO_KEY });
    expect((await runHere(["keys", "rotate", "staging", "flags", "--state-dir", "state"], { cwd: dir.path })).code).toBe(0);
    expect((await stat(dir.file("state"))).mode & 0o777).toBe(0o700);
    expect((await stat(dir.file("state/keys.json"))).mode & 0o777).toBe(0o600);
    await chmod(dir.file("state/keys.json"), 0o640);
    const rotated = await runHere(["keys", "rotate", "staging", "flags", "--state-dir", "state"], { cwd: dir.path });
    const [, key] = rotated.stdout.match(/^staging {2}(fs_staging_\S+) {2}\(written to state\/keys\.json\)$/m)!;
    expect(JSON.parse(await readFile(dir.file("state/keys.json"), "utf8"))).toEqual({ staging: key });
    expect((await stat(dir.file("state/keys.json"))).mode & 0o777).toBe(0o600);

    await chmod(dir.file("state/keys.json"), 0o666);
    const refused = await run(["keys", "list", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(refused).toMatchObject({ code: 1, stdout: "" });
    expect(refused.stderr).toMatch(
      /^flagserve keys list: refusing state file \S*keys\.json: other users may write it \(mode 0666\); fix it with: chmod 600 /,
    );
  });
});

describe("flagserve keys: the state directory and revoking replaced keys", () => {
  it("dir prints the configuration's state directory, the one list and the server use", async () => {
    const dir = await t.dir({ "flags/staging.yaml": NO_KEY });
    const env = { XDG_STATE_HOME: dir.file("xdg") };
    const printed = await run(["keys", "dir", "flags"], { cwd: dir.path, env });
    expect(printed).toMatchObject({ code: 0, stderr: "" });
    const state = printed.stdout.trim();
    expect(state).toMatch(new RegExp(`^${dir.file("xdg/flagserve/flags-")}[0-9a-f]{12}$`));
    expect((await run(["keys", "dir", dir.file("flags")], { env })).stdout.trim()).toBe(state); // from anywhere
    const list = await run(["keys", "list", "flags"], { cwd: dir.path, env });
    const key = list.stdout.match(/^staging {2}(\S+)/m)![1];
    expect(JSON.parse(await readFile(`${state}/keys.json`, "utf8"))).toEqual({ staging: key });
    expect(await readdir(dir.path)).toEqual(["flags", "xdg"]); // nothing beside the configuration
  });

  it("processes generating keys over one state directory at once agree: none loses another's key", async () => {
    const dir = await t.dir({ "flags/a.yaml": NO_KEY, "flags/b.yaml": NO_KEY, "flags/c.yaml": NO_KEY });
    const lists = await Promise.all([1, 2, 3].map(() => run(["keys", "list", "flags", "--state-dir", "state"], { cwd: dir.path })));
    expect(lists.map((l) => l.code)).toEqual([0, 0, 0]);
    expect(new Set(lists.map((l) => l.stdout)).size).toBe(1);
    const kept = JSON.parse(await readFile(dir.file("state/keys.json"), "utf8")) as Record<string, string>;
    expect(lists[0]!.stdout).toBe(`a  ${kept.a}  (state)\nb  ${kept.b}  (state)\nc  ${kept.c}  (state)\n`);
  });

  it("rotate --revoke-now with no running server in the state directory says none will see it, and exits 1", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const rotated = await run(["keys", "rotate", "test", "flags", "--state-dir", "state", "--revoke-now"], { cwd: dir.path });
    expect(rotated.code).toBe(1);
    expect(rotated.stdout).toMatch(/^test {2}fs_test_\S+ {2}\(written to flags\/test\.yaml\)$/m);
    expect(rotated.stderr).toContain("--revoke-now: no running server recorded itself in state, so none will see the revocation");
  });

  it("revoke ends the grace of a key edited in the file on the running server; rotate --revoke-now finds the server", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE });
    const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")], { env: { FLAGSERVE_ADMIN_TOKEN: "" } });
    t.track(cli);
    const evaluate = (k: string) =>
      fetch(`${url}/ofrep/v1/evaluate/flags/bool-flag`, { method: "POST", headers: { "x-api-key": k } }).then((r) => r.status);
    await writeFile(dir.file("flags/test.yaml"), OFREP_FIXTURE.replace(TEST_KEY, "edited-key-0123456789"));
    await until(async () => (await evaluate("edited-key-0123456789")) === 200);
    expect(await evaluate(TEST_KEY)).toBe(200); // the old key's grace (an hour by default)
    const revoked = await run(["keys", "revoke", "test", "flags", "--state-dir", "state"], {
      cwd: dir.path,
      env: { FLAGSERVE_ADMIN_TOKEN: "" },
    });
    expect(revoked).toMatchObject({ code: 0, stdout: "test  1 old key(s) revoked\n", stderr: "" });
    expect(await evaluate(TEST_KEY)).toBe(401);

    const rotated = await run(["keys", "rotate", "test", "flags", "--state-dir", "state", "--revoke-now"], { cwd: dir.path });
    expect(rotated.code).toBe(0);
    expect(rotated.stderr).toBe(`the server at ${url} reads state: it stops accepting the old key as soon as it loads the new one\n`);
    const [, key] = rotated.stdout.match(/^test {2}(fs_test_\S+) /m)!;
    await until(async () => (await evaluate(key!)) === 200);
    expect(await evaluate("edited-key-0123456789")).toBe(401);
  });

  it("revoke prints what the server answers escaped: no control character from it reaches the terminal", async () => {
    const dir = await t.dir();
    const server = createServer((_req, res) =>
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ environment: "test", revoked: "1\u001b[2J\nforged" })),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.later(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const revoked = await runHere(["keys", "revoke", "test", "--url", url, "--admin-token", "a-token"], { cwd: dir.path });
    expect(revoked).toEqual({ code: 0, stdout: "test  1\\u001b[2J\\u000aforged old key(s) revoked\n", stderr: "" });
  });
});
