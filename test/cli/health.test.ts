/**
 * `flagserve health` against a real server that is starting, running, or absent: in-process
 * (runCli), and as the binary where it starts beside the server and for --insecure (which sets
 * NODE_TLS_REJECT_UNAUTHORIZED for the whole process).
 */
import { serveFlagsDir } from "../helpers/server.js";
import { createServer as createHttpServer } from "node:http";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { freePort } from "../helpers/ports.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const t = cleanupAfterEach();

const FLAGS = `apiKey: health-key-0123456789\nflags:\n  a:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;

describe("flagserve health", () => {
  it("--wait succeeds against a server started at the same moment", async () => {
    const dir = await t.dir({ "flags/dev.yaml": FLAGS });
    const port = await freePort();
    // Both at once, as in `flagserve ... & flagserve health --wait 20`: the probe starts first.
    const health = run(["health", `http://127.0.0.1:${port}`, "--wait", "20"], { timeoutMs: 25_000 });
    const server = t.track(runCli([dir.file("flags"), "--state-dir", dir.file("state"), "--port", String(port), "-q"]));
    const result = await health;
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(`ready http://127.0.0.1:${port}/readyz (1 environment)\n`);
    expect(result.code).toBe(0);
    expect(server.child.exitCode).toBeNull();
  });

  it("without a URL, probes the server that recorded itself in ./flags' state directory, whatever its port", async () => {
    const dir = await t.dir({ "flags/dev.yaml": FLAGS });
    const server = t.track(runCli(["--port", "0", "-q"], { cwd: dir.path }));
    const [, url] = await server.waitFor(/^ready (\S+)$/m);
    const result = await run(["health"], { cwd: dir.path });
    expect(result).toMatchObject({ code: 0, stdout: `ready ${url}/readyz (1 environment)\n`, stderr: "" });
  });

  it("exits 1 right away without --wait when nothing listens, and 1 at the end of --wait", async () => {
    const port = await freePort();
    const once = await runHere(["health", `http://127.0.0.1:${port}`]);
    expect(once.code).toBe(1);
    expect(once.stderr).toMatch(new RegExp(`^not ready: http://127\\.0\\.0\\.1:${port}/readyz: ECONNREFUSED\\n$`));

    const waited = await runHere(["health", `http://127.0.0.1:${port}/`, "--wait", "1"]);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(/: ECONNREFUSED \(waited 1 s\)\n$/);
  });

  it("counts degraded (served, with a broken file) as ready; exits 1 on any other answer", async () => {
    const dir = await t.dir({ "flags/dev.yaml": FLAGS, "flags/broken.yaml": "flags: [" });
    const server = await serveFlagsDir(dir, { allowInvalid: true });
    t.later(() => server.close());
    // Served with a broken file beside it: degraded, still ready.
    const degraded = await runHere(["health", server.url, "-q"]);
    expect(degraded).toMatchObject({ code: 0, stdout: "", stderr: "" });

    // An HTTP server that is not flagserve's ready answer.
    const other = createHttpServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    t.later(() => {
      other.closeAllConnections();
      return new Promise((resolve) => other.close(resolve));
    });
    const { port: otherPort } = other.address() as { port: number };
    const unavailable = await runHere(["health", `http://127.0.0.1:${otherPort}`]);
    expect(unavailable.code).toBe(1);
    expect(unavailable.stderr).toBe(`not ready: http://127.0.0.1:${otherPort}/readyz: HTTP 503\n`);
  });

  it("checks a server started with --https when told to accept its self-signed certificate", async () => {
    const dir = await t.dir({ "flags/dev.yaml": FLAGS });
    const port = await freePort();
    const server = t.track(runCli([dir.file("flags"), "--state-dir", dir.file("state"), "--port", String(port), "--https", "-q"]));
    await server.waitFor(/^ready /m);
    const refused = await run(["health", `https://127.0.0.1:${port}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^not ready: https:\/\/127\.0\.0\.1:\d+\/readyz: \S+/);
    const accepted = await run(["health", `https://127.0.0.1:${port}`, "--insecure"]);
    expect(accepted).toMatchObject({ code: 0, stdout: `ready https://127.0.0.1:${port}/readyz (1 environment)\n` });
  });

  it("exits 2 on a usage error", async () => {
    for (const args of [
      ["health", "not a url"],
      ["health", "ftp://127.0.0.1"],
      ["health", "--wait", "-1"],
      ["health", "--wait", "soon"],
      ["health", "--nope"],
    ]) {
      const result = await runHere(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/error: .*\n\(run "flagserve health --help" for usage\)\n$/);
    }
  });
});
