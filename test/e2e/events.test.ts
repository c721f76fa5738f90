/**
 * Files edited on disk while real clients listen: every edit becomes the right event. The server
 * runs in-process, or as the binary where its log lines, its banner or its shutdown are checked.
 */
import { serveFlagsDir } from "../helpers/server.js";
import { mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { startServer, type ServerOptions } from "../../src/server/server.js";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { runHere } from "../cli/run.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { openSse, type SseBlock, type SseConnection } from "../helpers/sse.js";

const KEY = "events-key-0123456789";
const OTHER = "other-key-0123456789";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const flagsFile = (flags: Record<string, string>, segments = "", apiKey = KEY) =>
  [
    `apiKey: ${apiKey}`,
    segments ? `segments:\n${segments}` : "",
    "flags:",
    ...Object.entries(flags).map(
      ([key, defaultVariant]) => `  ${key}:\n    variants: { "on": true, "off": false }\n    defaultVariant: "${defaultVariant}"`,
    ),
    "",
  ].join("\n");

async function serve(files: Record<string, string>, extraArgs: string[] = []) {
  const dir = await tempDir();
  for (const [name, content] of Object.entries(files)) await dir.write(name, content);
  const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state"), ...extraArgs]);
  cleanups.push(() => cli.stop("SIGKILL"));
  return { dir, cli, url };
}

/** The same server in this process. */
async function serveHere(files: Record<string, string>, options: Partial<ServerOptions> = {}) {
  const dir = await tempDir();
  for (const [name, content] of Object.entries(files)) await dir.write(name, content);
  const server = await serveFlagsDir(dir, options);
  cleanups.push(() => server.close());
  return { dir, url: server.url };
}

async function listen(url: string, key = KEY, accept = "text/event-stream"): Promise<SseConnection> {
  const sse = await openSse(`${url}/api/v1/flags/events`, { "x-api-key": key, accept });
  cleanups.push(() => sse.close());
  return sse;
}

const data = (b: SseBlock) => JSON.parse(b.data!);
const isEvent = (name: string) => (b: SseBlock) => b.event === name;

/** Waits until the server serves `value` for `flag` (the reload has been applied). */
async function served(url: string, flag: string, variant: string, key = KEY) {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${url}/ofrep/v1/evaluate/flags/${flag}`, { method: "POST", headers: { "x-api-key": key } });
    if (res.status === 200 && (await res.json()).variant === variant) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${flag} never served ${variant}`);
}

describe("GET /api/v1/flags/events", () => {
  it("answers 401 JSON without a valid key", async () => {
    const { url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }) });
    for (const headers of [{}, { "x-api-key": "nope" }]) {
      const res = await fetch(`${url}/api/v1/flags/events`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ errorCode: "UNAUTHORIZED" });
    }
  });

  it("flushes headers at once, with text/event-stream when asked and text/plain otherwise", async () => {
    const { url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }) });
    const sse = await listen(url);
    expect(sse.response.status).toBe(200);
    expect(sse.response.headers.get("content-type")).toBe("text/event-stream");
    expect(sse.response.headers.get("cache-control")).toBe("no-cache");
    expect(sse.response.headers.get("x-accel-buffering")).toBe("no");
    const plain = await listen(url, KEY, "*/*");
    expect(plain.response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  });

  it("sends heartbeats {} without an id at the --heartbeat interval", async () => {
    const { url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }) }, { heartbeatSeconds: 0.3 });
    const sse = await listen(url);
    const beat = await sse.next(isEvent("heartbeat"), 3_000);
    expect(beat.fields).toEqual(["event", "data"]);
    expect(beat.data).toBe("{}");
  });

  it("turns created, changed and deleted flags into one flag-updated each", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on", b: "on", c: "on" }) });
    const sse = await listen(url);
    const before = Date.now();
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ a: "off", b: "on", d: "on" }));
    await sse.next((b) => b.event === "flag-updated" && data(b).flagKey === "d");
    await served(url, "a", "off");
    const events = sse.events();
    expect(events.map((e) => [e.event, data(e).flagKey])).toEqual([
      ["flag-updated", "a"],
      ["flag-updated", "c"],
      ["flag-updated", "d"],
    ]);
    for (const e of events) {
      expect(e.fields).toEqual(["event", "data", "id"]);
      expect(Number(e.id)).toBeGreaterThanOrEqual(before);
      expect(new Date(data(e).timestamp).toISOString()).toBe(data(e).timestamp);
    }
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sends one segment-modified per reload however many segments changed", async () => {
    const seg = (v: string) => `  s1:\n    "==": [{ var: plan }, ${v}]\n  s2:\n    "==": [{ var: tier }, ${v}]\n`;
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }, seg("gold")) });
    const sse = await listen(url);
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ a: "off" }, seg("silver")));
    await sse.next(isEvent("config-updated"));
    await served(url, "a", "off");
    expect(sse.events().map((e) => [e.event, data(e).flagKey ?? data(e).reason])).toEqual([
      ["flag-updated", "a"],
      ["config-updated", "segment-modified"],
    ]);
  });

  it("produces nothing for whitespace, comment and key-order edits", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on", b: "on" }) });
    const sse = await listen(url);
    const reordered = `# a comment\nflags:\n  b:\n    defaultVariant: "on"\n    variants: { "off": false, "on": true }\n\n  a:\n    variants:\n      "on": true\n      "off": false\n    defaultVariant: "on"\napiKey:   ${KEY}\n`;
    await writeFile(dir.file("flags/dev.yaml"), reordered);
    await new Promise((r) => setTimeout(r, 500));
    // A real change afterwards: it must be the first event the client sees.
    await writeFile(
      dir.file("flags/dev.yaml"),
      reordered.replace('defaultVariant: "on"\n    variants: { "off"', 'defaultVariant: "off"\n    variants: { "off"'),
    );
    await sse.next(isEvent("flag-updated"));
    expect(sse.events().map((e) => data(e).flagKey)).toEqual(["b"]);
  });

  it("keeps the last good configuration on an invalid edit, and sends only the net events once fixed", async () => {
    const { dir, url, cli } = await serve({ "flags/dev.yaml": flagsFile({ a: "on", b: "on" }) });
    const sse = await listen(url);
    const file = dir.file("flags/dev.yaml");
    // A problem outside the flags keeps the whole last good file (a broken flag alone: isolation.test.ts).
    await writeFile(file, `${flagsFile({ a: "off" })}colour: maybe\n`);
    await cli.waitFor(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\d+:\\d+ `), "stderr");
    const ready = await (await fetch(`${url}/readyz`)).json();
    expect(ready.status).toBe("degraded");
    expect(ready.problems.join("\n")).toMatch(/dev\.yaml:\d+:\d+ unknown property 'colour'/);
    await served(url, "a", "on");
    await served(url, "b", "on");

    await writeFile(file, flagsFile({ a: "off", b: "on" }));
    await sse.next(isEvent("flag-updated"));
    await served(url, "a", "off");
    expect(sse.events().map((e) => data(e).flagKey)).toEqual(["a"]);
    expect((await (await fetch(`${url}/readyz`)).json()).status).toBe("ready");
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^flagserve_reloads_total\{result="invalid"\} [1-9]/m);
    expect(metrics).toMatch(/^flagserve_reloads_total\{result="changed"\} [1-9]/m);
  });

  it("keeps environments apart", async () => {
    const { dir, url } = await serveHere({
      "flags/dev.yaml": flagsFile({ a: "on" }),
      "flags/prod.yaml": flagsFile({ a: "on" }, "", OTHER),
    });
    const dev = await listen(url, KEY);
    const prod = await listen(url, OTHER);
    await writeFile(dir.file("flags/prod.yaml"), flagsFile({ a: "off" }, "", OTHER));
    await prod.next(isEvent("flag-updated"));
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ z: "on" }));
    await dev.next((b) => b.event === "flag-updated" && data(b).flagKey === "z");
    await served(url, "z", "on");
    expect(dev.events().map((e) => data(e).flagKey)).toEqual(["a", "z"]);
    expect(prod.events().map((e) => data(e).flagKey)).toEqual(["a"]);
  });

  it("replays events newer than Last-Event-ID", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on", b: "on" }) });
    const sse = await listen(url);
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ a: "off", b: "on" }));
    const first = await sse.next(isEvent("flag-updated"));
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ a: "off", b: "off" }));
    await sse.next((b) => b.event === "flag-updated" && data(b).flagKey === "b");
    const again = await openSse(`${url}/api/v1/flags/events`, { "x-api-key": KEY, "last-event-id": first.id! });
    cleanups.push(() => again.close());
    const replayed = await again.next(isEvent("flag-updated"));
    expect(data(replayed).flagKey).toBe("b");
    expect(again.events()).toHaveLength(1);
  });

  it("announces a new environment's key and ends a removed environment's streams", async () => {
    const { dir, url, cli } = await serve({ "flags/dev.yaml": flagsFile({ a: "on" }) });
    await dir.write("flags/qa.yaml", `flags:\n  q:\n    variants: { "on": true }\n    defaultVariant: "on"\n`);
    const [, key] = await cli.waitFor(/environment qa added, key (fs_qa_\S+)/, "stderr");
    const qa = await listen(url, key!);
    expect(qa.response.status).toBe(200);
    await rm(dir.file("flags/qa.yaml"));
    await qa.ended;
    const gone = await fetch(`${url}/ofrep/v1/evaluate/flags/q`, { method: "POST", headers: { "x-api-key": key! } });
    expect(gone.status).toBe(401);
  });

  it("limits streams per client address, taken from --client-ip-header when set", async () => {
    const { url } = await serveHere(
      { "flags/dev.yaml": flagsFile({ a: "on" }) },
      { maxStreamsPerIp: 2, clientIpHeader: "X-Forwarded-For" },
    );
    const from = (ip: string) => openSse(`${url}/api/v1/flags/events`, { "x-api-key": KEY, "x-forwarded-for": `${ip}, 10.0.0.1` });
    const open = [await from("203.0.113.1"), await from("203.0.113.1"), await from("203.0.113.2")];
    cleanups.push(() => open.forEach((s) => s.close()));
    const third = await fetch(`${url}/api/v1/flags/events`, { headers: { "x-api-key": KEY, "x-forwarded-for": "203.0.113.1" } });
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await third.json()).toMatchObject({ errorCode: "RATE_LIMITED" });
  });
});

describe("a burst of edits", () => {
  it("ends serving the last valid file, and no client sees an event for an invalid state", async () => {
    const valid = (i: number) =>
      `apiKey: ${KEY}\nflags:\n  burst:\n    variants: { current: "value-${i}" }\n    defaultVariant: current\n  other:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;
    const invalid = [
      (i: number) => `${valid(i)}  broken: [\n`, // YAML syntax
      (i: number) => `apiKey: ${KEY}\nflags:\n  ghost:\n    state: MAYBE\n    variants: { x: ${i} }\n    defaultVariant: x\n`, // schema
      (i: number) => valid(i).replace("defaultVariant: current", "defaultVariant: missing"), // semantic
      () => "", // an empty, half-written file
    ];
    const { dir, url } = await serveHere({ "flags/dev.yaml": valid(0) });
    const sse = await listen(url);
    const file = dir.file("flags/dev.yaml");
    let lastValid = 0;
    for (let i = 1; i <= 100; i++) {
      if (i % 3 === 0 && i !== 99) await writeFile(file, invalid[i % invalid.length]!(i));
      else {
        await writeFile(file, valid(i));
        lastValid = i;
      }
    }
    expect(lastValid).toBe(100);
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${url}/ofrep/v1/evaluate/flags/burst`, { method: "POST", headers: { "x-api-key": KEY } });
      if ((await res.json()).value === "value-100") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const final = await fetch(`${url}/ofrep/v1/evaluate/flags/burst`, { method: "POST", headers: { "x-api-key": KEY } });
    expect(await final.json()).toMatchObject({ value: "value-100" });
    await sse.next((b) => b.event === "flag-updated");
    // Every state a client was told about was a valid one: only `burst` ever changed.
    const seen = sse.events().map((e) => `${e.event}:${data(e).flagKey}`);
    expect(new Set(seen)).toEqual(new Set(["flag-updated:burst"]));
    expect((await (await fetch(`${url}/readyz`)).json()).status).toBe("ready");
  });
});

describe("a Kubernetes ConfigMap volume", () => {
  it("turns an atomic ..data symlink swap into the right events", async () => {
    const dir = await tempDir();
    const mount = dir.file("flags");
    const version = async (name: string, content: string) => {
      await mkdir(`${mount}/${name}`, { recursive: true });
      await writeFile(`${mount}/${name}/dev.yaml`, content);
    };
    // The kubelet's layout: ..<timestamp>/<files>, ..data -> ..<timestamp>, <file> -> ..data/<file>.
    await version("..2026_11_21_00_00_00.000000001", flagsFile({ a: "on", b: "on" }));
    await symlink("..2026_11_21_00_00_00.000000001", `${mount}/..data`);
    await symlink("..data/dev.yaml", `${mount}/dev.yaml`);
    const server = await startServer({
      source: { path: mount },
      port: 0,
      host: "127.0.0.1",
      stateDir: dir.file("state"),
      logger: silentLogger,
    });
    cleanups.push(() => server.close());
    const { url } = server;
    const sse = await listen(url);

    // An update: a new timestamped directory, a ..data_tmp link renamed over ..data, the old directory removed.
    await version("..2026_11_21_00_01_00.000000002", flagsFile({ a: "off", b: "on" }));
    await symlink("..2026_11_21_00_01_00.000000002", `${mount}/..data_tmp`);
    await rename(`${mount}/..data_tmp`, `${mount}/..data`);
    await rm(`${mount}/..2026_11_21_00_00_00.000000001`, { recursive: true });

    await sse.next(isEvent("flag-updated"));
    await served(url, "a", "off");
    await new Promise((r) => setTimeout(r, 300)); // a second reload of the same version must say nothing
    expect(sse.events().map((e) => data(e).flagKey)).toEqual(["a"]);
  });
});

describe("variant event set", () => {
  it("sends flag-change with the flag key, or null for segment changes", async () => {
    const seg = (v: string) => `  s1:\n    "==": [{ var: plan }, ${v}]\n`;
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }, seg("gold")) }, { eventSet: "variant" });
    const sse = await listen(url);
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ a: "off" }, seg("silver")));
    await sse.next((b) => b.event === "flag-change" && data(b).flagKey === null);
    expect(sse.events().map((e) => [e.event, data(e).flagKey])).toEqual([
      ["flag-change", "a"],
      ["flag-change", null],
    ]);
  });
});

describe("key rotation", () => {
  it("with --revoke-now sends api-key-rotated valid until now, then revokes the old key and closes its streams", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": `# keep this comment\n${flagsFile({ a: "on" })}` });
    const sse = await listen(url);
    const rotate = await runHere(["keys", "rotate", "dev", dir.file("flags"), "--state-dir", dir.file("state"), "--revoke-now"]);
    expect(rotate.code).toBe(0);
    const newKey = rotate.stdout.match(/dev {2}(fs_dev_\S+)/)![1]!;
    const rotated = await sse.next(isEvent("config-updated"));
    expect(data(rotated)).toMatchObject({ reason: "api-key-rotated" });
    const flipswitch = await sse.next(isEvent("api-key-rotated"));
    expect(data(flipswitch)).toEqual({ validUntil: data(rotated).timestamp, timestamp: data(rotated).timestamp });
    await sse.ended;
    const old = await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": KEY } });
    expect(old.status).toBe(401);
    const fresh = await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": newKey } });
    expect(fresh.status).toBe(200);
    expect(await readFile(dir.file("flags/dev.yaml"), "utf8")).toMatch(/^# keep this comment\napiKey: fs_dev_/);
  });

  it("rotates a generated key in the state file, and the running server announces it", async () => {
    const noKey = `flags:\n  a:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;
    const { dir, url, cli } = await serve({ "flags/dev.yaml": noKey });
    const oldKey = cli.stdout().match(/environment dev\s+key (\S+)/)![1]!;
    const sse = await listen(url, oldKey);
    const rotate = await runHere(["keys", "rotate", "dev", dir.file("flags"), "--state-dir", dir.file("state"), "--revoke-now"]);
    expect(rotate.code).toBe(0);
    expect(rotate.stdout).toContain(dir.file("state/keys.json"));
    const rotated = await sse.next(isEvent("config-updated"));
    expect(data(rotated)).toMatchObject({ reason: "api-key-rotated" });
    await sse.ended;
    const newKey = JSON.parse(await readFile(dir.file("state/keys.json"), "utf8")).dev;
    expect(newKey).not.toBe(oldKey);
    expect(await readFile(dir.file("flags/dev.yaml"), "utf8")).toBe(noKey);
    const res = await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": newKey } });
    expect(res.status).toBe(200);
  });

  it("keeps the old key working for --key-grace seconds", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }) }, { keyGraceSeconds: 1 });
    const sse = await listen(url);
    const rotate = await runHere(["keys", "rotate", "dev", dir.file("flags"), "--state-dir", dir.file("state")]);
    expect(rotate.code).toBe(0);
    const { validUntil, timestamp } = data(await sse.next(isEvent("api-key-rotated")));
    expect(Date.parse(validUntil) - Date.parse(timestamp)).toBe(1000);
    const during = await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": KEY } });
    expect(during.status).toBe(200);
    await sse.ended;
    const after = await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": KEY } });
    expect(after.status).toBe(401);
  });
});

describe("a key retired twice", () => {
  // Each edit changes the flag too, so `served` sees when the server has applied it.
  const withKey = async (dir: TempDir, url: string, apiKey: string, variant: string) => {
    await writeFile(dir.file("flags/dev.yaml"), flagsFile({ a: variant }, "", apiKey));
    await served(url, "a", variant, apiKey);
  };
  const status = async (url: string, key: string) =>
    (await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": key } })).status;

  it("keeps its second grace whole: the first rotation's timer does not end it", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }) }, { keyGraceSeconds: 2 });
    const first = Date.now();
    await withKey(dir, url, OTHER, "off"); // KEY -> OTHER: KEY's first grace, until first + 2 s
    await withKey(dir, url, KEY, "on"); // back to KEY
    await new Promise((r) => setTimeout(r, 1000));
    const onKey = await listen(url); // opened with the current key
    await withKey(dir, url, OTHER, "off"); // KEY retired again, until ~first + 3 s
    await new Promise((r) => setTimeout(r, first + 2500 - Date.now()));
    expect(await status(url, KEY)).toBe(200);
    expect(onKey.blocks.length).toBeGreaterThan(0);
    await onKey.ended; // closed when its own (second) grace ends
    expect(Date.now() - first).toBeGreaterThanOrEqual(2900);
    expect(await status(url, KEY)).toBe(401);
  });

  it("keeps the streams of a key made current again", async () => {
    const { dir, url } = await serveHere({ "flags/dev.yaml": flagsFile({ a: "on" }) }, { keyGraceSeconds: 1 });
    await withKey(dir, url, OTHER, "off");
    await withKey(dir, url, KEY, "on");
    const onKey = await listen(url);
    let ended = false;
    void onKey.ended.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 1500)); // past the first grace
    expect(ended).toBe(false);
    expect(await status(url, KEY)).toBe(200);
  });
});

describe("key rotation by default", () => {
  it("keeps the old key and its streams for an hour, and says so in api-key-rotated", async () => {
    const { dir, url, cli } = await serve({ "flags/dev.yaml": flagsFile({ a: "on" }) });
    const sse = await listen(url);
    const rotate = await runHere(["keys", "rotate", "dev", dir.file("flags"), "--state-dir", dir.file("state")]);
    expect(rotate.code).toBe(0);
    const newKey = rotate.stdout.match(/dev {2}(fs_dev_\S+)/)![1]!;
    const { validUntil, timestamp } = data(await sse.next(isEvent("api-key-rotated")));
    expect(Date.parse(validUntil) - Date.parse(timestamp)).toBe(3600 * 1000);
    await cli.waitFor(/dev: the old key works until /, "stderr");
    for (const key of [KEY, newKey]) {
      const res = await fetch(`${url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": key } });
      expect(res.status).toBe(200);
    }
    // The stream opened with the old key is still open: a heartbeat-free edit still reaches it.
    await writeFile(
      dir.file("flags/dev.yaml"),
      (await readFile(dir.file("flags/dev.yaml"), "utf8")).replace('defaultVariant: "on"', 'defaultVariant: "off"'),
    );
    expect(data(await sse.next(isEvent("flag-updated")))).toMatchObject({ flagKey: "a" });
  });
});

describe("shutdown", () => {
  it("exits 0 on SIGTERM with 100 open streams", async () => {
    const { url, cli } = await serve({ "flags/dev.yaml": flagsFile({ a: "on" }) });
    const streams: SseConnection[] = [];
    for (let i = 0; i < 100; i++) streams.push(await listen(url));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain("flagserve_sse_streams 100");
    const exit = await (cli as CliProcess).stop("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    await Promise.all(streams.map((s) => s.ended));
  });
});
