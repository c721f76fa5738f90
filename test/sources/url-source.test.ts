/**
 * URL sources against a real local HTTP server that changes its content, fails and recovers:
 * the served flags follow, the events are those of a file edit, a failure keeps the last good
 * configuration and is logged once, unchanged documents cost a 304 and no reload. Real server,
 * real HTTP both ways, real SSE client; nothing mocked.
 */
import { writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createFlagServer } from "../../src/index.js";
import type { Logger } from "../../src/log/logger.js";
import { startServer, InvalidConfigError, type RunningServer } from "../../src/server/server.js";
import { FileSource } from "../../src/sources/files-source.js";
import type { ConfigSource } from "../../src/sources/source.js";
import { UrlSource, urlStem } from "../../src/sources/url-source.js";
import { ConfigServer } from "../helpers/config-server.js";
import { flagFile, keyOf, servedFlags, waitServed } from "../helpers/converge.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { openSse, type SseBlock, type SseConnection } from "../helpers/sse.js";
import { until } from "../helpers/wait.js";

const POLL_MS = 40;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Every log line, as "level: message". */
function recordingLogger(): Logger & { lines: string[]; matching(pattern: RegExp): string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, info: log("info"), warn: log("warn"), error: log("error"), matching: (p) => lines.filter((l) => p.test(l)) };
}

async function configServer(): Promise<ConfigServer> {
  const server = await ConfigServer.start();
  cleanups.push(() => server.stop());
  return server;
}

async function temp(): Promise<TempDir> {
  const dir = await tempDir("flagserve-url-");
  return dir;
}

async function serve(sources: ConfigSource[], logger: Logger, dir: TempDir, allowInvalid = false): Promise<RunningServer> {
  const server = await startServer({ source: { sources }, port: 0, host: "127.0.0.1", stateDir: dir.file("state"), logger, allowInvalid });
  cleanups.push(() => server.close());
  return server;
}

const urlSource = (url: string, logger?: Logger, timeoutMs = 2_000) => new UrlSource(url, { pollIntervalMs: POLL_MS, timeoutMs, logger });

async function listen(url: string, env: string): Promise<SseConnection> {
  const sse = await openSse(`${url}/api/v1/flags/events`, { "x-api-key": keyOf(env), accept: "text/event-stream" });
  cleanups.push(() => sse.close());
  return sse;
}

async function readiness(url: string): Promise<{ status: string; problems: string[] }> {
  return (await fetch(`${url}/readyz`)).json() as Promise<{ status: string; problems: string[] }>;
}

/** An event without what differs between two environments' streams (its time). */
const comparable = (b: SseBlock) => {
  const { timestamp, ...data } = JSON.parse(b.data!) as Record<string, unknown>;
  return { event: b.event, data, hasTimestamp: typeof timestamp === "string" };
};

describe("URL source", () => {
  it("serves the document's environment, named by its stem, and follows its changes with the events of a file edit", async () => {
    const http = await configServer();
    const dir = await temp();
    const initial = { a: 1, b: 2, c: 3 };
    http.set("/flags/dev.yaml", flagFile(keyOf("dev"), initial));
    const file = await dir.write("flags/local.yaml", flagFile(keyOf("local"), initial));
    const logger = recordingLogger();
    const server = await serve([urlSource(http.url("/flags/dev.yaml")), new FileSource(file)], logger, dir);
    expect(Object.keys(server.keys()).sort()).toEqual(["dev", "local"]);
    expect(await servedFlags(server.url, keyOf("dev"))).toEqual(initial);

    const fromUrl = await listen(server.url, "dev");
    const fromFile = await listen(server.url, "local");
    const edited = { a: 1, b: 20, d: 4 }; // b changed, c removed, d added
    http.set("/flags/dev.yaml", flagFile(keyOf("dev"), edited));
    await writeFile(file, flagFile(keyOf("local"), edited));
    expect(await waitServed(server.url, { dev: edited, local: edited })).toEqual({ dev: edited, local: edited });
    const flagEvents = (sse: SseConnection) => sse.events().filter((b) => b.event === "flag-updated");
    await until("three events on each stream", () => flagEvents(fromUrl).length >= 3 && flagEvents(fromFile).length >= 3);
    await sleep(3 * POLL_MS); // nothing more comes
    expect(fromUrl.events().map(comparable)).toEqual(fromFile.events().map(comparable));
    expect(
      flagEvents(fromUrl)
        .map((b) => JSON.parse(b.data!).flagKey)
        .sort(),
    ).toEqual(["b", "c", "d"]);
  });

  it("polls with If-None-Match and If-Modified-Since; a 304 causes no reload", async () => {
    const http = await configServer();
    const dir = await temp();
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    const logger = recordingLogger();
    const server = await serve([urlSource(http.url("/dev.yaml"))], logger, dir);
    const reloads = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return [...text.matchAll(/^flagserve_reloads_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    };
    const before = await reloads();
    const polls = await http.waitRequests("/dev.yaml", 5);
    for (const poll of polls) {
      expect(poll.ifNoneMatch).toMatch(/^".+"$/);
      expect(poll.ifModifiedSince).toMatch(/GMT$/);
      expect(poll.status).toBe(304);
    }
    expect(await reloads()).toBe(before);
    expect(logger.lines).toEqual([]);

    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 2 }));
    await until("the new value", async () => (await servedFlags(server.url, keyOf("dev")))?.a === 2);
    expect(await reloads()).toBe(before + 1);
  });

  it("keeps the last good configuration through a 500, refused connections, a timeout and invalid YAML; logs each problem once, and the recovery", async () => {
    const http = await configServer();
    const dir = await temp();
    const good = { a: 1 };
    http.set("/dev.yaml", flagFile(keyOf("dev"), good));
    const logger = recordingLogger();
    const url = http.url("/dev.yaml");
    const server = await serve([urlSource(url, logger, 300)], logger, dir);
    const stillGood = async () => expect(await servedFlags(server.url, keyOf("dev"))).toEqual(good);

    // A status: logged once however many polls fail, shown in /readyz, last good served.
    http.fail("/dev.yaml", 500);
    await until("the 500 in /readyz", async () => (await readiness(server.url)).status === "degraded");
    expect((await readiness(server.url)).problems).toEqual([`${url}:0:0 HTTP 500 Internal Server Error`]);
    await http.waitRequests("/dev.yaml", 5);
    expect(logger.matching(/HTTP 500/)).toEqual([`error: ${url}:0:0 HTTP 500 Internal Server Error`]);
    expect(logger.matching(/keeping the last good/)).toEqual(["warn: dev: keeping the last good configuration"]);
    await stillGood();

    // Nobody listening: a new problem, logged once.
    await http.stop();
    await until("connection refused logged", () => logger.matching(/ECONNREFUSED/).length > 0);
    await sleep(5 * POLL_MS);
    expect(logger.matching(/ECONNREFUSED/)).toEqual([`error: ${url}:0:0 cannot fetch: ECONNREFUSED`]);
    await stillGood();

    // Listening again, but never answering: the timeout.
    await http.listen();
    http.hang("/dev.yaml");
    await until("the timeout logged", () => logger.matching(/no complete response/).length > 0);
    expect(logger.matching(/no complete response/)).toEqual([`error: ${url}:0:0 no complete response within 0.3 s`]);
    await stillGood();

    // Answering, with a document that does not parse: url:line:col.
    http.set("/dev.yaml", `apiKey: ${keyOf("dev")}\nflags:\n  a: [unclosed\n`);
    await until("the YAML problem logged", () => logger.matching(new RegExp(`${url}:\\d+:\\d+ `)).some((l) => !l.includes(":0:0 ")));
    await stillGood();

    // Good again: served, ready, and the recovery logged (it came after the timeout).
    const fixed = { a: 5 };
    http.set("/dev.yaml", flagFile(keyOf("dev"), fixed));
    await until("the fixed flags", async () => (await servedFlags(server.url, keyOf("dev")))?.a === 5);
    expect((await readiness(server.url)).status).toBe("ready");
    expect(logger.matching(/fetched again/)).toEqual([`info: ${url}: fetched again (was: no complete response within 0.3 s)`]);
    const problemsLogged = logger.matching(/^error: /).length;
    await http.waitRequests("/dev.yaml", 3);
    expect(logger.matching(/^error: /).length).toBe(problemsLogged);
  });

  it("a 304 after a failure brings the kept document back, without an event", async () => {
    const http = await configServer();
    const dir = await temp();
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    const logger = recordingLogger();
    const server = await serve([urlSource(http.url("/dev.yaml"), logger)], logger, dir);
    const sse = await listen(server.url, "dev");
    const from = http.requests.length;
    http.fail("/dev.yaml", 503);
    await until("degraded", async () => (await readiness(server.url)).status === "degraded");
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 1 })); // same body, same ETag
    await until("ready", async () => (await readiness(server.url)).status === "ready");
    expect(http.requestsTo("/dev.yaml", from).some((r) => r.status === 304)).toBe(true);
    expect(sse.events().filter((b) => b.event === "flag-updated")).toEqual([]);
  });

  it("a failing URL at start-up is a problem: not served, unless --allow-invalid serves the rest", async () => {
    const http = await configServer();
    const dir = await temp();
    http.fail("/dev.yaml", 404);
    const file = await dir.write("flags/local.yaml", flagFile(keyOf("local"), { a: 1 }));
    const url = http.url("/dev.yaml");
    const failing = serve([urlSource(url), new FileSource(file)], recordingLogger(), dir);
    await expect(failing).rejects.toThrow(InvalidConfigError);
    await expect(failing).rejects.toMatchObject({ problems: [{ file: url, line: 0, col: 0, message: "HTTP 404 Not Found" }] });

    const logger = recordingLogger();
    const server = await serve([urlSource(url, logger), new FileSource(file)], logger, dir, true);
    expect(Object.keys(server.keys())).toEqual(["local"]);
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 7 }));
    expect(await waitServed(server.url, { dev: { a: 7 }, local: { a: 1 } })).toEqual({ dev: { a: 7 }, local: { a: 1 } });
  });

  it("a hostile document (5 700 nested `[`) is a problem of its own environment: the other sources keep reloading, --allow-invalid starts", async () => {
    const http = await configServer();
    const dir = await temp();
    const deep = `{"apiKey": "${keyOf("dev")}", "flags": ${"[".repeat(5700)}${"]".repeat(5700)}}`;
    http.set("/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    const local = await dir.write("flags/local.yaml", flagFile(keyOf("local"), { a: 1 }));
    const url = http.url("/dev.yaml");
    const logger = recordingLogger();
    const server = await serve([urlSource(url, logger), new FileSource(local)], logger, dir);

    http.set("/dev.yaml", deep);
    await until("the deep document in /readyz", async () => (await readiness(server.url)).status === "degraded");
    const past = deep.indexOf("[") + 128; // the column of the `[` that opens level 129
    expect((await readiness(server.url)).problems).toEqual([
      `${url}:1:${past} the document is nested deeper than 128 levels of mappings and lists; no flag configuration needs that`,
    ]);
    // Edits of the valid local file still apply; dev keeps its last good configuration.
    await writeFile(local, flagFile(keyOf("local"), { a: 2 }));
    expect(await waitServed(server.url, { dev: { a: 1 }, local: { a: 2 } })).toEqual({ dev: { a: 1 }, local: { a: 2 } });
    expect(logger.matching(/reload failed|RangeError|call stack/)).toEqual([]);

    // At start: refused with the problem (no stack trace), and served without it with allowInvalid.
    const refused = serve([urlSource(url), new FileSource(local)], recordingLogger(), dir);
    await expect(refused).rejects.toThrow(InvalidConfigError);
    const tolerant = await serve([urlSource(url), new FileSource(local)], recordingLogger(), dir, true);
    expect(Object.keys(tolerant.keys())).toEqual(["local"]);
  });

  it("a document that is not valid UTF-8 is a problem at its first bad byte, not served with U+FFFD", async () => {
    const http = await configServer();
    const dir = await temp();
    const url = http.url("/dev.yaml");
    http.set(
      "/dev.yaml",
      Buffer.concat([
        Buffer.from(`apiKey: ${keyOf("dev")}\nflags:\n  a: { variants: { v: "caf`),
        Buffer.from([0xe9]),
        Buffer.from('" }, defaultVariant: v }\n'),
      ]),
    );
    const failing = serve([urlSource(url)], recordingLogger(), dir);
    await expect(failing).rejects.toMatchObject({
      problems: [{ file: url, line: 3, col: 27, message: "not valid UTF-8: byte 0xe9 at byte offset 60; save the file as UTF-8" }],
    });
  });

  it("a URL answered from elsewhere (a redirect) is logged with the final URL, and shown in /readyz and on the page", async () => {
    const http = await configServer();
    const dir = await temp();
    const url = http.url("/dev.yaml");
    const final = http.url("/moved/dev.yaml");
    http.redirect("/dev.yaml", final);
    http.set("/moved/dev.yaml", flagFile(keyOf("dev"), { a: 3 }));
    const logger = recordingLogger();
    const server = await serve([urlSource(url, logger)], logger, dir);
    expect(await servedFlags(server.url, keyOf("dev"))).toEqual({ a: 3 });
    expect(logger.matching(/redirected/)).toEqual([`info: ${url}: redirected: the document is read from ${final}`]);
    expect(await (await fetch(`${server.url}/readyz`)).json()).toMatchObject({ status: "ready", redirects: { [url]: final } });
    const page = await fetch(`${server.url}/api/v1/admin/environments`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect((await page.json()).environments).toMatchObject([{ name: "dev", files: [url], redirects: { [url]: final } }]);
    // Polled again through the same redirect: nothing new to log.
    await http.waitRequests("/moved/dev.yaml", 2);
    expect(logger.matching(/redirected/)).toHaveLength(1);
    // Redirected elsewhere, to the same document: /readyz says where it is read from now.
    const elsewhere = http.url("/elsewhere/dev.yaml");
    http.set("/elsewhere/dev.yaml", flagFile(keyOf("dev"), { a: 3 }));
    http.redirect("/dev.yaml", elsewhere);
    const redirectsNow = async () => ((await (await fetch(`${server.url}/readyz`)).json()) as { redirects?: unknown }).redirects;
    await expect.poll(redirectsNow, { timeout: 5_000 }).toEqual({ [url]: elsewhere });
  });

  it("an environment defined by two sources is an error naming both", async () => {
    const http = await configServer();
    const dir = await temp();
    http.set("/flags/dev.yaml", flagFile(keyOf("dev"), { a: 1 }));
    const file = await dir.write("flags/dev.yaml", flagFile("another-key-0123456789", { a: 2 }));
    const url = http.url("/flags/dev.yaml");
    const failing = serve([urlSource(url), new FileSource(dir.file("flags"))], recordingLogger(), dir);
    await expect(failing).rejects.toMatchObject({
      problems: [
        { file, line: 0, col: 0, message: `environment 'dev' is also defined by ${url}` },
        { file: url, line: 0, col: 0, message: `environment 'dev' is also defined by ${file}` },
      ],
    });
  });

  it("the programmatic API takes URLs and paths, and polls at its pollIntervalSeconds", async () => {
    const http = await configServer();
    const dir = await temp();
    http.set("/dev.json", JSON.stringify({ apiKey: keyOf("dev"), flags: { a: { variants: { v: 1 }, defaultVariant: "v" } } }));
    const file = await dir.write("local.yaml", flagFile(keyOf("local"), { a: 1 }));
    const server = await createFlagServer({
      config: [http.url("/dev.json"), file],
      pollIntervalSeconds: POLL_MS / 1000,
      stateDir: dir.file("state"),
    });
    cleanups.push(() => server.close());
    expect(server.keys).toEqual({ dev: keyOf("dev"), local: keyOf("local") });
    http.set("/dev.json", JSON.stringify({ apiKey: keyOf("dev"), flags: { a: { variants: { v: 3 }, defaultVariant: "v" } } }));
    expect(await waitServed(server.url, { dev: { a: 3 }, local: { a: 1 } })).toEqual({ dev: { a: 3 }, local: { a: 1 } });
  });

  it("names an environment by the stem of the URL's last path segment", () => {
    expect(urlStem("https://config.example/flags/development.yaml")).toBe("development");
    expect(urlStem("https://config.example/qa.json?ref=main#x")).toBe("qa");
    expect(urlStem("http://127.0.0.1:8000/a/prod%2Deu.yml")).toBe("prod-eu");
    expect(urlStem("http://")).toBe("");
  });

  it("a document larger than the cap is a problem, read no further", async () => {
    const http = await configServer();
    const source = new UrlSource(http.url("/big.yaml"), { maxBytes: 1024 });
    cleanups.push(() => source.close());
    http.set("/big.yaml", `# ${"x".repeat(4096)}\n${flagFile(keyOf("big"), { a: 1 })}`);
    const read = await source.read();
    expect(read.documents).toEqual([
      { stem: "big", document: { file: http.url("/big.yaml"), error: "document is larger than 1024 bytes" } },
    ]);
  });
});
