/**
 * `flagserve events`: a client printing a real server's stream, through edits and restarts. The
 * client runs as the binary where it is stopped by a signal, in-process (runCli) where it ends by
 * itself; the server in-process except where it is killed and restarted.
 */
import { serveFlagsDir } from "../helpers/server.js";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { describe, expect, it } from "vitest";
import { runCli, startCli } from "../helpers/cli.js";
import type { ServerOptions } from "../../src/server/server.js";
import { freePort } from "../helpers/ports.js";
import { cleanupAfterEach, runHere } from "./run.js";

const KEY = "events-cli-key-0123";
const t = cleanupAfterEach();

const flagsFile = (variant: string, extra = "") =>
  `apiKey: ${KEY}\n${extra}flags:\n  a:\n    variants: { "on": true, "off": false }\n    defaultVariant: "${variant}"\n`;

async function serve(extraArgs: string[] = []) {
  const dir = await t.dir({ "flags/dev.yaml": flagsFile("on") });
  const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state"), ...extraArgs]);
  t.track(cli);
  return { dir, cli, url };
}

/** A server in this process, for the cases where the client is the subject. */
async function serveHere(options: Partial<ServerOptions> = {}) {
  const dir = await t.dir({ "flags/dev.yaml": flagsFile("on") });
  const server = await serveFlagsDir(dir, options);
  t.later(() => server.close());
  return { dir, url: server.url };
}

/** Lines of stdout (complete ones). */
const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("flagserve events", () => {
  it("prints each event; reconnects with backoff to a server restarted on the same port and prints the next", async () => {
    const { dir, cli: server, url } = await serve();
    const port = new URL(url).port;
    const client = t.track(runCli(["events", url, "--key", KEY]));
    await client.waitFor(/^connected to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/flags\/events$/m, "stderr");

    await writeFile(dir.file("flags/dev.yaml"), flagsFile("off"));
    await client.waitFor(/flag-updated {2}\{"flagKey":"a"/);
    const [first] = lines(client.stdout());
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}flag-updated {2}\{"flagKey":"a","timestamp":"[^"]+"\}$/);

    // Killed without a goodbye: the client sees the connection break, then refused connections.
    await server.stop("SIGKILL");
    await client.waitFor(/reconnecting in 0\.5 s/, "stderr");
    const restarted = t.track(runCli([dir.file("flags"), "--state-dir", dir.file("state"), "--port", port]));
    await restarted.waitFor(/^ready /m);
    // Reconnected, sending the id of the last event it saw.
    await client.waitFor(/^reconnected to .* \(Last-Event-ID: \d+\)$/m, "stderr", 20_000);

    await writeFile(dir.file("flags/dev.yaml"), flagsFile("on", "segments:\n  s: true\n"));
    await client.waitFor(/config-updated {2}\{"reason":"segment-modified"/);
    const printed = lines(client.stdout());
    expect(printed.map((l) => l.split("  ")[1])).toEqual(["flag-updated", "flag-updated", "config-updated"]);

    // Backoff: 0.5 s, then doubling while the server was away.
    const delays = [...client.stderr().matchAll(/reconnecting in ([\d.]+) s/g)].map((m) => Number(m[1]));
    expect(delays[0]).toBe(0.5);
    delays.slice(1).forEach((d, i) => expect(d).toBe(delays[i]! * 2));

    expect(await client.stop("SIGINT")).toEqual({ code: 0, signal: null });
  });

  it("--json prints raw JSON lines; heartbeats only with --heartbeats; the variant event set is understood", async () => {
    const { dir, url } = await serveHere({ heartbeatSeconds: 0.2, eventSet: "variant" });
    const quiet = t.track(runCli(["events", `${url}/api/v1/flags/events`, "--key", KEY, "--json"]));
    const beats = t.track(runCli(["events", url, "--key", KEY, "--heartbeats"]));
    await Promise.all([quiet.waitFor(/^connected/m, "stderr"), beats.waitFor(/^connected/m, "stderr")]);
    await beats.waitFor(/ {2}heartbeat {2}\{\}$/m);

    await writeFile(dir.file("flags/dev.yaml"), flagsFile("off"));
    await quiet.waitFor(/"event":"flag-change"/);
    await beats.waitFor(/flag-change {2}\{"flagKey":"a"/);
    const records = lines(quiet.stdout()).map((l) => JSON.parse(l));
    expect(records).toEqual([
      {
        time: expect.stringMatching(/Z$/),
        event: "flag-change",
        id: expect.stringMatching(/^\d+$/),
        data: { flagKey: "a", timestamp: expect.any(String) },
      },
    ]);
    await writeFile(dir.file("flags/dev.yaml"), flagsFile("off", "segments:\n  s: true\n"));
    await quiet.waitFor(/"flagKey":null/);
    expect(quiet.stdout()).not.toContain("heartbeat");
    expect(await quiet.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  });

  it("exits 1 on 401 without retrying", async () => {
    const { url } = await serveHere();
    const client = await runHere(["events", url, "--key", "wrong-key-123"]);
    expect(client.code).toBe(1);
    expect(client.stderr).toContain("answered 401 UNAUTHORIZED");
    expect(client.stderr).not.toContain("reconnecting");
    expect(client.stdout).toBe("");
  });

  it("exits 1 for a URL that is not a flagserve event stream", async () => {
    const { url } = await serveHere();
    const client = await runHere(["events", `${url}/nowhere/api/v1/flags/events`, "--key", KEY]);
    expect(client.code).toBe(1);
    expect(client.stderr).toContain("answered 404");
  });

  it("takes the key from FLAGSERVE_KEY", async () => {
    const { url } = await serveHere();
    const client = t.track(runCli(["events", url], { env: { FLAGSERVE_KEY: KEY } }));
    await client.waitFor(/^connected/m, "stderr");
    expect(await client.stop("SIGINT")).toEqual({ code: 0, signal: null });
  });

  it("sends Last-Event-ID when reconnecting, retries 5xx with growing delays, and resets them once connected", async () => {
    // A scripted server: one event then end; then 503; then an event and stay open.
    const requests: IncomingHttpHeaders[] = [];
    const open: import("node:http").ServerResponse[] = [];
    const fake = createServer((req, res) => {
      requests.push(req.headers);
      open.push(res);
      const n = requests.length;
      if (n === 2) {
        res.writeHead(503, { "content-type": "application/json" }).end('{"errorCode":"INTERNAL","errorDetails":"restarting"}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`retry: 2000\n\nevent: flag-updated\ndata: {"flagKey":"f${n}"}\nid: ${1000 + n}\n\n`);
      if (n === 1) res.end();
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    t.later(
      () =>
        new Promise((r) => {
          fake.closeAllConnections();
          fake.close(r);
        }),
    );
    const url = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;

    const client = t.track(runCli(["events", url, "--key", "k-123"]));
    await client.waitFor(/"flagKey":"f3"/);
    expect(requests.map((h) => h["last-event-id"])).toEqual([undefined, "1001", "1001"]);
    expect(requests.every((h) => h["x-api-key"] === "k-123" && h.accept === "text/event-stream")).toBe(true);
    expect(client.stderr()).toMatch(
      /the server closed the stream; reconnecting in 0\.5 s\n.*answered 503 INTERNAL: restarting; reconnecting in 1 s\n/,
    );
    expect(lines(client.stdout()).map((l) => l.split("  ").slice(1).join("  "))).toEqual([
      'flag-updated  {"flagKey":"f1"}',
      'flag-updated  {"flagKey":"f3"}',
    ]);
    // Connected again: the next loss starts over at 0.5 s.
    open[2]!.end();
    await client.waitFor(/"flagKey":"f4"/);
    expect(client.stderr().match(/reconnecting in [\d.]+ s/g)).toEqual([
      "reconnecting in 0.5 s",
      "reconnecting in 1 s",
      "reconnecting in 0.5 s",
    ]);
    expect(requests[3]!["last-event-id"]).toBe("1003");
    expect(await client.stop("SIGINT")).toEqual({ code: 0, signal: null });
  });

  it("--give-up: a port nobody listens on is retried with backoff, then given up with exit 1", async () => {
    // A port that was free a moment ago: connections to it are refused.
    const port = await freePort();

    const client = await runHere(["events", `http://127.0.0.1:${port}`, "--key", KEY, "--give-up", "1.2"]);
    expect(client.code).toBe(1);
    const stderr = client.stderr.trim().split("\n");
    const refused = `cannot connect to http://127.0.0.1:${port}/api/v1/flags/events (ECONNREFUSED)`;
    expect(stderr[0]).toBe(`${refused}; reconnecting in 0.5 s`);
    // The last wait is cut short to end at the deadline.
    for (const line of stderr.slice(1, -1)) expect(line).toMatch(/\(ECONNREFUSED\); reconnecting in 0\.\d+ s$/);
    expect(stderr.length).toBeGreaterThanOrEqual(3);
    expect(stderr.at(-1)).toBe(`flagserve events: ${refused}; giving up after 1.2 s without a connection (--give-up)`);
    expect(client.stdout).toBe("");
  });

  it("--give-up must be a non-negative number (usage error)", async () => {
    const client = await runHere(["events", "http://127.0.0.1:1", "--key", KEY, "--give-up", "soon"]);
    expect(client.code).toBe(2);
    expect(client.stderr).toContain("--give-up must be a non-negative number");
  });
});
