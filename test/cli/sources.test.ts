/**
 * The CLI with URL sources (a real local HTTP server) and mixed sources: serve (the binary),
 * validate and keys (in-process, runCli).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultStateDir } from "../../src/store/state-dir.js";
import { startCli } from "../helpers/cli.js";
import { ConfigServer } from "../helpers/config-server.js";
import { flagFile, keyOf, servedFlags } from "../helpers/converge.js";
import { freePort } from "../helpers/ports.js";
import { until } from "../helpers/wait.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const t = cleanupAfterEach();

async function configServer(): Promise<ConfigServer> {
  const server = await ConfigServer.start();
  t.later(() => server.stop());
  return server;
}

/** An environment document without an apiKey: its key is generated and kept in the state directory. */
const NO_KEY = "flags:\n  a:\n    variants: { v: 1 }\n    defaultVariant: v\n";

describe("flagserve validate with URLs", () => {
  it("exit 0 for a valid document, one fetch", async () => {
    const http = await configServer();
    http.set("/flags/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    const url = http.url("/flags/dev.yaml");
    const { code, stdout, stderr } = await runHere(["validate", url]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toBe(`ok: ${url} has 1 valid environment: dev (1 flag)\n`);
    expect(http.requestsTo("/flags/dev.yaml")).toHaveLength(1);
  });

  it("exit 1 for a failing status, a refused connection, a timeout and invalid YAML, each at the URL", async () => {
    const http = await configServer();
    const url = (path: string) => http.url(path);
    http.fail("/500/dev.yaml", 500);
    http.hang("/slow/dev.yaml");
    http.set("/bad/dev.yaml", `flags:\n  a:\n    variants: { v: 1 }\n    defaultVariant: nope\n`);
    const failing = await runHere(["validate", url("/500/dev.yaml")]);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain(`${url("/500/dev.yaml")}:0:0 HTTP 500 Internal Server Error\n`);
    const slow = await runHere(["validate", url("/slow/dev.yaml"), "--fetch-timeout", "0.2"]);
    expect(slow.code).toBe(1);
    expect(slow.stderr).toContain(`${url("/slow/dev.yaml")}:0:0 no complete response within 0.2 s\n`);
    const bad = await runHere(["validate", url("/bad/dev.yaml"), "--format", "json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).problems).toEqual([
      { file: url("/bad/dev.yaml"), line: 4, col: 21, message: "defaultVariant 'nope' is not one of the variants ('v')" },
    ]);
    // A port nobody listens on (a stopped server's port could still have a pooled connection in this process).
    const gone = `http://127.0.0.1:${await freePort()}/dev.yaml`;
    const refused = await runHere(["validate", gone]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${gone}:0:0 cannot fetch: ECONNREFUSED\n`);
  });

  it("mixes files, directories and URLs; an environment defined twice names both sources", async () => {
    const http = await configServer();
    const dir = await t.dir({ "flags/local.yaml": flagFile(keyOf("local"), { a: 1 }), "one/prod.yaml": flagFile(keyOf("prod"), { a: 1 }) });
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    http.set("/local.yaml", flagFile("other-key-0123456789", { a: 1 }));
    const mixed = await runHere(["validate", "flags", "one/prod.yaml", http.url("/dev.yaml")], { cwd: dir.path });
    expect(mixed.code).toBe(0);
    expect(mixed.stdout).toContain("3 valid environments: dev (1 flag), local (1 flag), prod (1 flag)");
    const twice = await runHere(["validate", "flags", http.url("/local.yaml")], { cwd: dir.path });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`flags/local.yaml:0:0 environment 'local' is also defined by ${http.url("/local.yaml")}\n`);
    expect(twice.stderr).toContain(
      `${http.url("/local.yaml")}:0:0 environment 'local' is also defined by ${dir.file("flags/local.yaml")}\n`,
    );
  });
});

describe("flagserve serve with URLs", () => {
  it("serves a URL beside a directory, follows its changes, and keeps a generated key in the state directory", async () => {
    const http = await configServer();
    const dir = await t.dir({ "flags/local.yaml": flagFile(keyOf("local"), { a: 1 }) });
    http.set("/config/dev.yaml", NO_KEY);
    const url = http.url("/config/dev.yaml");
    const env = { XDG_STATE_HOME: dir.file("xdg") };
    const { cli, url: base } = await startCli(["flags", url, "--poll-interval", "0.05", "-q"], { cwd: dir.path, env });
    t.track(cli);
    // In the configuration's own state directory (store/state-dir.ts), and the key the server answers to.
    const state = defaultStateDir(["flags", url], env, dir.path);
    const key = (JSON.parse(readFileSync(join(state, "keys.json"), "utf8")) as Record<string, string>).dev!;
    expect(key).toMatch(/^fs_dev_/);
    expect(await servedFlags(base, key)).toEqual({ a: 1 });
    expect(await servedFlags(base, keyOf("local"))).toEqual({ a: 1 });
    http.set("/config/dev.yaml", NO_KEY.replace("{ v: 1 }", "{ v: 2 }"));
    await until("the new value served", async () => (await servedFlags(base, key))?.a === 2);
  });

  it("with URLs alone, the state directory is per user too, named after the URL's host; nothing is written in the working directory", async () => {
    const http = await configServer();
    const dir = await t.dir();
    http.set("/dev.yaml", NO_KEY);
    const { cli } = await startCli([http.url("/dev.yaml"), "-q"], { cwd: dir.path, env: { XDG_STATE_HOME: dir.file("xdg") } });
    t.track(cli);
    expect(existsSync(join(defaultStateDir([http.url("/dev.yaml")], { XDG_STATE_HOME: dir.file("xdg") }), "keys.json"))).toBe(true);
    expect(readdirSync(dir.file("xdg/flagserve"))).toEqual([expect.stringMatching(/^127\.0\.0\.1-[0-9a-f]{12}$/)]);
    expect(readdirSync(dir.path)).toEqual(["xdg"]);
  });

  it("a failing URL at start-up: not serving, exit 1, the problem at the URL", async () => {
    const http = await configServer();
    http.fail("/dev.yaml", 502);
    const { code, stderr } = await run([http.url("/dev.yaml"), "--port", "0"]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${http.url("/dev.yaml")}:0:0 HTTP 502 Bad Gateway`);
    expect(stderr).toContain(`not serving: 1 problem in ${http.url("/dev.yaml")}`);
  });
});

describe("flagserve keys with URLs", () => {
  it("rotate: a key written in the URL's document cannot be; a generated one can", async () => {
    const http = await configServer();
    const dir = await t.dir();
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    http.set("/gen.yaml", NO_KEY);
    const written = await runHere(["keys", "rotate", "dev", http.url("/dev.yaml")], { cwd: dir.path });
    expect(written.code).toBe(1);
    expect(written.stderr).toBe(
      `flagserve keys rotate: cannot rotate the key of 'dev': it is written in ${http.url("/dev.yaml")}, which flagserve cannot write; change it there\n`,
    );
    const listed = await runHere(["keys", http.url("/gen.yaml")], { cwd: dir.path });
    expect(listed.code).toBe(0);
    const [, before] = /^gen\s+(\S+)\s+\(state\)$/m.exec(listed.stdout) ?? [];
    const rotated = await runHere(["keys", "rotate", "gen", http.url("/gen.yaml")], { cwd: dir.path });
    expect(rotated.code).toBe(0);
    const [, after] = /^gen\s+(\S+)\s+/m.exec(rotated.stdout) ?? [];
    expect(before).toBeTruthy();
    expect(after).toBeTruthy();
    expect(after).not.toBe(before);
  });
});
