/** The published package: what `npm pack` ships installs in an empty directory and runs. */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./helpers/cli.js";
import { tempDir, type TempDir } from "./helpers/files.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));

let dir: TempDir;
let tarball: string;
let files: string[];

beforeAll(async () => {
  dir = await tempDir("flagserve-pack-");
  // --ignore-scripts: `npm test` has just built dist/; packing must not rebuild it under the tests' feet.
  const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir.path], { cwd: ROOT });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarball = dir.file(info!.filename);
  files = info!.files.map((f) => f.path);
  await mkdir(dir.file("app"));
  await writeFile(dir.file("app/package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true })); // what `npm init -y` writes, less
  await run("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: dir.file("app") });
}, 180_000);

describe("npm pack", () => {
  it("ships dist, bin, schema, the protocol files, the example and the licence, and no sources or tests", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "bin/flagserve.js",
        "dist/cli/main.js",
        "dist/index.js",
        "dist/index.d.ts",
        "schema/flagserve.schema.json",
        "flags.example.yaml",
        "README.md",
        "LICENSE",
        "package.json",
        "ui/index.html",
        "ui/app.js",
        "ui/app.css",
        "proto/flagd/evaluation/v1/evaluation.proto",
        "proto/flagd/evaluation/v2/evaluation.proto",
        "proto/flagd/sync/v1/sync.proto",
      ]),
    );
    expect(files.filter((f) => /^(src|test|bench|\.ci)\//.test(f))).toEqual([]);
  });

  it("installs in an empty directory and runs `npx flagserve --version`", async () => {
    const { stdout } = await run("npx", ["--no-install", "flagserve", "--version"], { cwd: dir.file("app") });
    const { version } = JSON.parse((await import("node:fs")).readFileSync(`${ROOT}/package.json`, "utf8"));
    expect(stdout.trim()).toBe(version);
  });

  it("validates the bundled example with `npx flagserve validate`", async () => {
    const example = dir.file("app/node_modules/flagserve/flags.example.yaml");
    const { stdout } = await run("npx", ["--no-install", "flagserve", "validate", example], { cwd: dir.file("app") });
    expect(stdout).toMatch(/valid/i);
  });

  it("can be imported with its types", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--input-type=module", "-e", 'const m = await import("flagserve"); console.log(typeof m.createFlagServer)'],
      { cwd: dir.file("app") },
    );
    expect(stdout.trim()).toBe("function");
  });

  it("serves the dashboard page from the installed package", async () => {
    const npx = startNpm("npx", ["--no-install", "flagserve", "--port", "0", "--quiet", "--state-dir", dir.file("state-page")]);
    try {
      const url = await npx.ready;
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>flagserve dashboard</title>");
      for (const asset of ["/ui/app.js", "/ui/app.css"]) expect((await fetch(`${url}${asset}`)).status).toBe(200);
    } finally {
      process.kill(-npx.child.pid!, "SIGKILL");
    }
  }, 60_000);
});

describe("npm pack: the flagd port", () => {
  it("serves flagd's services from the installed package: gRPC, and Connect as curl sends it", async () => {
    const npx = startNpm("npx", [
      "--no-install",
      "flagserve",
      "--port",
      "0",
      "--flagd-port",
      "0",
      "--flagd-selector-by-name",
      "development",
      "--state-dir",
      dir.file("state-flagd"),
    ]);
    try {
      await npx.ready;
      const port = Number(/flagd port (\d+)/.exec(npx.output())?.[1]);
      const { credentials, makeGenericClientConstructor, Metadata } = await import("@grpc/grpc-js");
      const path = "/flagd.evaluation.v2.Service/ResolveBoolean";
      // ResolveBooleanRequest { flag_key = 1 } by hand, so that nothing of the package under test reads it.
      const key = Buffer.from("new-checkout");
      const Client = makeGenericClientConstructor(
        {
          ResolveBoolean: {
            path,
            requestStream: false,
            responseStream: false,
            requestSerialize: (b: Buffer) => b,
            requestDeserialize: (b: Buffer) => b,
            responseSerialize: (b: Buffer) => b,
            responseDeserialize: (b: Buffer) => b,
          },
        },
        "flagd",
      );
      const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
      const metadata = new Metadata();
      metadata.set("flagd-selector", "development");
      const answer = await new Promise<{ error: unknown; bytes?: Buffer }>((resolve) =>
        (
          client as unknown as {
            ResolveBoolean: (r: Buffer, m: InstanceType<typeof Metadata>, cb: (e: unknown, r?: Buffer) => void) => void;
          }
        ).ResolveBoolean(Buffer.concat([Buffer.from([0x0a, key.length]), key]), metadata, (error, bytes) => resolve({ error, bytes })),
      );
      client.close();
      expect(answer.error).toBeNull();
      expect(answer.bytes!.toString("latin1")).toContain("DEFAULT"); // field 2, the reason (no email: not a beta tester)
      const connect = await fetch(`http://127.0.0.1:${port}/flagd.evaluation.v1.Service/ResolveAll`, {
        method: "POST",
        headers: { "content-type": "application/json", "flagd-selector": "development" },
        body: "{}",
      });
      expect(await connect.json()).toMatchObject({ flags: { "new-checkout": { reason: "DEFAULT", boolValue: false } } });
    } finally {
      process.kill(-npx.child.pid!, "SIGKILL");
    }
  }, 60_000);
});

/** `npx ARGS` (or `npm ARGS`) in the app, started the way a CI script's `npx flagserve &` is. */
/** In a process group of its own, so that the test can end whatever is left of it. */
function startNpm(command: "npx" | "npm", args: string[], options: { env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(command, args, {
    cwd: dir.file("app"),
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (output += c));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 60 s:\n${output}`)), 60_000);
    const check = () => {
      const match = /^ready (\S+)$/m.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", check);
    void exited.then(() => reject(new Error(`exited before ready:\n${output}`)));
  });
  ready.catch(() => {}); // not every command prints a ready line; those that wait for one see the error
  return { child, ready, exited, output: () => output };
}

/** Resolves once nothing accepts connections at `url` (at most 10 s). */
async function released(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const refused = await fetch(`${url}/healthz`).then(
      () => false,
      (error: { cause?: { code?: string } }) => error.cause?.code === "ECONNREFUSED",
    );
    if (refused) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} still accepts connections 10 s after npm was stopped`);
}

// Each case its own npm, server and port: side by side.
describe.concurrent("run through npm: the server ends with npm", () => {
  const started: ChildProcess[] = [];
  // A server left behind by a failed test is still in npm's process group.
  afterAll(() => {
    for (const child of started) {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group is gone: nothing was left
      }
    }
  });

  it("`npx flagserve` then SIGTERM to npm (what `kill $!` sends): the port is released; the example's keys are kept per user", async () => {
    const xdg = dir.file("xdg");
    const npx = startNpm("npx", ["--no-install", "flagserve", "--port", "0"], { env: { XDG_STATE_HOME: xdg } });
    started.push(npx.child);
    const url = await npx.ready;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // The bundled example served from the installed package writes nothing into it.
    expect(existsSync(dir.file("app/node_modules/flagserve/.flagserve"))).toBe(false);
    expect(await readdir(dir.file("xdg/flagserve"))).toEqual([expect.stringMatching(/^flags\.example-[0-9a-f]{12}$/)]);

    npx.child.kill("SIGTERM");
    await released(url);
    await npx.exited;
  }, 60_000);

  for (const signal of ["SIGKILL", "SIGHUP"] as const) {
    it(`\`npm exec flagserve\` then ${signal} to npm: the port is released`, async () => {
      const npm = startNpm("npm", ["exec", "--", "flagserve", "--port", "0", "--quiet", "--state-dir", dir.file(`state-${signal}`)]);
      started.push(npm.child);
      const url = await npm.ready;
      npm.child.kill(signal);
      await released(url);
    }, 60_000);
  }

  it("`npx flagserve events` then SIGTERM to npm: the client ends and its stream closes", async () => {
    const flags = await dir.write(
      "events/flags/dev.yaml",
      'apiKey: npx-events-key-0123\nflags:\n  a:\n    variants: { "on": true }\n    defaultVariant: "on"\n',
    );
    const server = runCli([dirname(flags), "--port", "0", "--state-dir", dir.file("events/state")]);
    try {
      const [, url] = await server.waitFor(/^ready (\S+)$/m);
      const npx = startNpm("npx", ["--no-install", "flagserve", "events", url!, "--key", "npx-events-key-0123"]);
      started.push(npx.child);
      await server.waitFor(/stream opened/, "stderr", 60_000);
      npx.child.kill("SIGTERM");
      await server.waitFor(/stream closed/, "stderr", 10_000);
      await npx.exited;
    } finally {
      await server.stop("SIGKILL");
    }
  }, 60_000);

  it("SIGINT to the process group (Ctrl-C in a terminal) stops npm and the server", async () => {
    const npx = startNpm("npx", ["--no-install", "flagserve", "--port", "0", "--quiet", "--state-dir", dir.file("state-int")]);
    started.push(npx.child);
    const url = await npx.ready;
    process.kill(-npx.child.pid!, "SIGINT");
    await released(url);
    await npx.exited;
  }, 60_000);
});
