/** Start-up, keys, failures and shutdown of the real `flagserve` process. */
import { createServer } from "node:net";
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { OFREP_FIXTURE, TEST_KEY } from "../helpers/fixtures.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function dirWith(files: Record<string, string>): Promise<TempDir> {
  const dir = await tempDir();
  for (const [name, content] of Object.entries(files)) await dir.write(name, content);
  return dir;
}

function track(cli: CliProcess): CliProcess {
  cleanups.push(() => cli.stop("SIGKILL"));
  return cli;
}

const NO_KEY = `flags:\n  f:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;

describe("flagserve serve", () => {
  it("prints the URL and every environment with its key, then a ready line", async () => {
    const dir = await dirWith({ "flags/test.yaml": OFREP_FIXTURE, "flags/staging.yaml": NO_KEY });
    const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")]);
    track(cli);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.stdout()).toContain(`environment test     key ${TEST_KEY}`);
    expect(cli.stdout()).toMatch(/environment staging {2}key fs_staging_[A-Za-z0-9_-]{24}/);
  });

  it("says at start that a directory without flag files serves nothing, as validate does", async () => {
    const dir = await dirWith({ "flags/README.md": "not a flag file\n" });
    const { cli } = await startCli([dir.file("flags"), "--port", "0", "--state-dir", dir.file("state")]);
    track(cli);
    expect(cli.stderr()).toMatch(
      /warn: .*flags: no environments found \(expected \*\.yaml, \*\.yml or \*\.json files, or subdirectories\)/,
    );
  });

  it("persists generated keys so they survive a restart", async () => {
    const dir = await dirWith({ "flags/staging.yaml": NO_KEY });
    const args = [dir.file("flags"), "--state-dir", dir.file("state")];
    const first = await startCli(args);
    const key = first.cli.stdout().match(/key (fs_staging_\S+)/)![1]!;
    expect((await first.cli.stop()).code).toBe(0);
    const state = JSON.parse(await readFile(dir.file("state/keys.json"), "utf8"));
    expect(state).toEqual({ staging: key });

    const second = await startCli(args);
    track(second.cli);
    expect(second.cli.stdout()).toContain(`key ${key}`);
    const res = await fetch(`${second.url}/ofrep/v1/evaluate/flags/f`, { method: "POST", headers: { "x-api-key": key } });
    expect(res.status).toBe(200);
  });

  it("refuses a busy port, naming it, instead of moving elsewhere", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => blocker.close(r)));
    const port = (blocker.address() as { port: number }).port;
    const dir = await dirWith({ "flags/test.yaml": OFREP_FIXTURE });
    const cli = track(runCli([dir.file("flags"), "--port", String(port)]));
    const { code } = await cli.exited;
    expect(code).toBe(1);
    expect(cli.stderr()).toContain(`port ${port} on 127.0.0.1 is in use by another program`);
    expect(cli.stdout()).not.toContain("ready");
  });

  it("refuses a port that browsers and fetch() will not call (6000), naming it", async () => {
    const dir = await dirWith({ "flags/test.yaml": OFREP_FIXTURE });
    const cli = track(runCli([dir.file("flags"), "--port", "6000", "--state-dir", dir.file("state")]));
    const { code } = await cli.exited;
    expect(code).toBe(1);
    expect(cli.stderr()).toContain("port 6000 is one that browsers and fetch() refuse to connect to");
    expect(cli.stderr()).not.toContain("in use");
    expect(cli.stdout()).not.toContain("ready");
  });

  it("refuses to start on an invalid configuration, listing file:line:col for each problem", async () => {
    const dir = await dirWith({
      "flags/good.yaml": NO_KEY,
      "flags/bad.yaml": `flags:\n  f:\n    state: MAYBE\n    variants: { a: 1 }\n    defaultVariant: b\n`,
    });
    const cli = track(runCli([dir.file("flags"), "--port", "0", "--state-dir", dir.file("state")]));
    expect((await cli.exited).code).toBe(1);
    const bad = dir.file("flags/bad.yaml");
    expect(cli.stderr()).toContain(`${bad}:3:12`);
    expect(cli.stderr()).toContain(`${bad}:5:21`);
  });

  it("serves the valid environments with --allow-invalid", async () => {
    const dir = await dirWith({
      "flags/test.yaml": OFREP_FIXTURE,
      "flags/bad.yaml": `flags: [`,
    });
    const { cli, url } = await startCli([dir.file("flags"), "--allow-invalid", "--state-dir", dir.file("state")]);
    track(cli);
    expect(cli.stderr()).toContain(dir.file("flags/bad.yaml"));
    const res = await fetch(`${url}/ofrep/v1/evaluate/flags/bool-flag`, { method: "POST", headers: { "x-api-key": TEST_KEY } });
    expect(res.status).toBe(200);
    const ready = await (await fetch(`${url}/readyz`)).json();
    expect(ready.status).toBe("degraded");
    expect(ready.problems[0]).toContain("bad.yaml");
  });

  it.each(["SIGTERM", "SIGINT"] as const)("exits 0 on %s", async (signal) => {
    const dir = await dirWith({ "flags/test.yaml": OFREP_FIXTURE });
    const { cli } = await startCli([dir.file("flags")]);
    expect(await cli.stop(signal)).toEqual({ code: 0, signal: null });
  });

  it("rejects bad option values as usage errors (exit 2)", async () => {
    const cli = track(runCli(["--port", "http"]));
    expect((await cli.exited).code).toBe(2);
    expect(cli.stderr()).toMatch(/--port.*must be an integer/);
    expect(cli.stderr()).toContain("--help");
    const unknown = track(runCli(["--no-such-option"]));
    expect((await unknown.exited).code).toBe(2);
  });

  it("serves the bundled example when there is no PATH and no ./flags", async () => {
    const dir = await dirWith({});
    const { cli, url } = await startCli(["--state-dir", dir.file("state")], { cwd: dir.path });
    track(cli);
    expect(cli.stdout()).toContain("bundled example");
    const key = cli.stdout().match(/environment development\s+key (\S+)/)![1]!;
    const res = await fetch(`${url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-api-key": key } });
    expect(res.status).toBe(200);
    expect((await res.json()).flags.length).toBeGreaterThan(3);
  });
});
