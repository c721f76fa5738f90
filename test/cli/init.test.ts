/** `flagserve init`, run in-process (runCli): a starter that validates, serves, and never overwrites by accident. */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { invocation } from "../../src/cli/invocation.js";
import { BIN } from "../helpers/cli.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
const t = cleanupAfterEach();
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const schemaLine = (text: string) => text.split("\n")[0];

describe("flagserve init", () => {
  it("writes development.yaml and production.yaml in ./flags that validate", async () => {
    const dir = await t.dir();
    const init = await runHere(["init"], { cwd: dir.path });
    expect(init.code).toBe(0);
    expect(init.stderr).toBe("");
    expect(init.stdout).toContain("created flags/development.yaml\ncreated flags/production.yaml\n");
    expect(init.stdout).toMatch(/ validate flags +# check the files\n/);

    const dev = await readFile(dir.file("flags/development.yaml"), "utf8");
    const prod = await readFile(dir.file("flags/production.yaml"), "utf8");
    // What the issue asks of the starter: a segment, a boolean flag with targeting, a
    // multi-variant flag with a fractional rollout, comments, and the schema for editors.
    for (const text of [dev, prod]) {
      expect(text).toMatch(/^segments:\n {2}beta-testers:/m);
      expect(text).toContain("new-checkout:");
      expect(text).toContain("banner-color:");
      expect(text).toContain("fractional:");
      expect(text).toContain("{ $ref: beta-testers }");
      expect(text.split("\n").filter((l) => l.trimStart().startsWith("#")).length).toBeGreaterThan(5);
    }
    // Outside a project with flagserve installed: this version's schema on the npm CDN.
    expect(schemaLine(dev)).toBe(
      `# yaml-language-server: $schema=https://cdn.jsdelivr.net/npm/flagserve@${version}/schema/flagserve.schema.json`,
    );

    const validate = await runHere(["validate"], { cwd: dir.path });
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain("2 valid environments: development (2 flags), production (2 flags)");
  });

  it("evaluates as its comments say", async () => {
    const dir = await t.dir();
    expect((await runHere(["init", dir.path])).code).toBe(0);
    const evalJson = async (...args: string[]) => {
      const r = await runHere(["eval", ...args, dir.path]);
      return { code: r.code, body: JSON.parse(r.stdout) };
    };
    const [beta, other, rollout, noKey] = await Promise.all([
      evalJson("new-checkout", "-e", "development", "-c", '{"email":"ann@example.com"}'),
      evalJson("new-checkout", "-e", "development", "-c", '{"email":"bob@elsewhere.org"}'),
      evalJson("banner-color", "-e", "production", "-c", '{"targetingKey":"user-1"}'),
      evalJson("banner-color", "-e", "production"),
    ]);
    expect(beta.body).toMatchObject({ value: true, variant: "on", reason: "TARGETING_MATCH" });
    expect(other.body).toMatchObject({ value: false, variant: "off", reason: "DEFAULT" });
    expect(rollout.body).toMatchObject({ reason: "SPLIT" });
    expect(["blue", "green"]).toContain(rollout.body.variant);
    expect(noKey).toMatchObject({ code: 1, body: { errorCode: "TARGETING_KEY_MISSING" } });
  });

  it("refuses to overwrite (exit 1, nothing written) unless --force", async () => {
    const dir = await t.dir({ "flags/production.yaml": "# mine\nflags: {}\n" });
    const refused = await runHere(["init"], { cwd: dir.path });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("flags/production.yaml already exists; nothing written (use --force to overwrite)");
    expect(await readFile(dir.file("flags/production.yaml"), "utf8")).toBe("# mine\nflags: {}\n");
    await expect(readFile(dir.file("flags/development.yaml"), "utf8")).rejects.toThrow(/ENOENT/);

    const forced = await runHere(["init", "--force"], { cwd: dir.path });
    expect(forced.code).toBe(0);
    expect(await readFile(dir.file("flags/production.yaml"), "utf8")).toContain("banner-color:");
  });

  it("points editors at node_modules/flagserve when flagserve is installed in the project", async () => {
    const dir = await t.dir();
    await mkdir(dir.file("node_modules/flagserve/schema"), { recursive: true });
    await writeFile(dir.file("node_modules/flagserve/schema/flagserve.schema.json"), "{}");
    const init = await runHere(["init", "config/flags"], { cwd: dir.path });
    expect(init.code).toBe(0);
    const dev = await readFile(dir.file("config/flags/development.yaml"), "utf8");
    expect(schemaLine(dev)).toBe("# yaml-language-server: $schema=../../node_modules/flagserve/schema/flagserve.schema.json");

    const custom = await runHere(["init", "other", "--schema", "./my.schema.json"], { cwd: dir.path });
    expect(custom.code).toBe(0);
    expect(schemaLine(await readFile(dir.file("other/production.yaml"), "utf8"))).toBe("# yaml-language-server: $schema=./my.schema.json");
  });

  it("fails with exit 1 when DIR cannot be created", async () => {
    const dir = await t.dir({ taken: "a file, not a directory" });
    const { code, stderr } = await runHere(["init", "taken"], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^flagserve init: cannot write in taken: /);
  });
  // The "next steps" must run as printed where the reader is: flagserve is on the PATH only
  // after npm link or a global install; in a project (or the clone) `npx flagserve` finds it.
  describe("prints next steps that run as printed", () => {
    const PATH = dirname(process.execPath) + ":/usr/bin:/bin"; // node and npx, never a flagserve
    // npm's variables, which this suite has when `npm test` or `npx vitest` started it, left out.
    const npmUnset = Object.fromEntries(Object.keys(process.env).flatMap((name) => (/^npm_/i.test(name) ? [[name, undefined]] : [])));
    const stepsOf = (stdout: string) =>
      stdout
        .split("\n")
        .filter((l) => l.startsWith("  ") && l.includes("  # "))
        .map((l) => l.slice(2, l.indexOf("  # ")).trim());
    const runStep = (command: string, cwd: string, path: string) =>
      promisify(execFile)("/bin/sh", ["-c", command], { cwd, env: { ...process.env, PATH: path } }).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stdout: e.stderr }),
      );

    it.each([
      ["nowhere (node and the path to the program)", "node ", false, false],
      ["in a project that installed it (npx)", "npx flagserve ", true, false],
      ["with flagserve on the PATH (npm link, npm install -g)", "flagserve ", false, true],
    ])("%s", async (_where, prefix, installed, linked) => {
      const dir = await t.dir();
      if (installed) await dir.link("node_modules/.bin/flagserve", BIN);
      if (linked) await dir.link("bin/flagserve", BIN);
      const path = linked ? `${dir.file("bin")}:${PATH}` : PATH;
      const init = await run(["init"], { cwd: dir.path, env: { ...npmUnset, PATH: path } });
      expect(init.code).toBe(0);
      const [validate, serve] = stepsOf(init.stdout);
      expect(validate).toMatch(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}.*validate flags$`));
      expect(serve?.startsWith(prefix)).toBe(true);
      const ran = await runStep(validate!, dir.path, path);
      expect(ran).toEqual({ code: 0, stdout: expect.stringContaining("2 valid environments") });
    });

    // Started by npm, the PATH is npm's: npx and `npm run` put the project's node_modules/.bin
    // (where flagserve is) in front of it, which the reader's shell does not have. These run the
    // real npm in a project where flagserve is linked as `npm install` / `npm link` would
    // (node_modules/flagserve and its .bin entry), from a shell without npm's variables.
    const withoutNpm = (path: string) => ({
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
      PATH: path,
      NO_COLOR: "1",
    });
    const project = async () => {
      const dir = await t.dir({
        "package.json": JSON.stringify({ name: "app", private: true, scripts: { "flags:init": "flagserve init" } }),
      });
      await dir.link("node_modules/flagserve", ROOT);
      await dir.link("node_modules/.bin/flagserve", "../flagserve/bin/flagserve.js");
      return dir;
    };
    // npx and `npm exec` set the same variables (npm_command=exec); a script sets its own.
    it.each([
      ["through npx", "npx flagserve init", true],
      ["through an npm script", "npm run -s flags:init", false],
    ])("%s in a project that installed it: npx flagserve", async (_how, command, runIt) => {
      const dir = await project();
      const init = await promisify(execFile)("/bin/sh", ["-c", command], { cwd: dir.path, env: withoutNpm(PATH) });
      const [validate, , serve] = stepsOf(init.stdout);
      expect(validate).toBe("npx flagserve validate flags");
      expect(serve).toBe("npx flagserve flags");
      if (!runIt) return; // each npm start costs a second: the step is run once
      const ran = await runStep(validate!, dir.path, PATH);
      expect(ran).toEqual({ code: 0, stdout: expect.stringContaining("2 valid environments") });
    });

    it("nowhere, from a path a shell would change: the path is one quoted word", async () => {
      const dir = await t.dir();
      // Unquoted, a lone quote is a syntax error; in double quotes, $HOME is expanded.
      for (const name of ["it's", "costs $HOME"]) {
        const root = dir.file(name);
        await dir.link(`${name}/bin/flagserve.js`, BIN);
        const command = invocation(dir.path, { PATH }, root);
        expect(await runStep(`${command} --version`, dir.path, PATH)).toEqual({ code: 0, stdout: `${version}\n` });
      }
    });

    it("through npx --package: names the package again, which plain npx would look up on the registry", () => {
      // npx sets these for `npx --package=./flagserve-0.1.0.tgz flagserve init` (npm 11); running
      // it for real installs the package into npx's cache, which takes too long for this suite.
      const env = { npm_command: "exec", npm_lifecycle_event: "npx", npm_config_package: "./flagserve-0.1.0.tgz", PATH };
      expect(invocation("/", env)).toBe("npx --package=./flagserve-0.1.0.tgz flagserve");
      expect(invocation("/", { ...env, npm_config_package: "/my projects/flagserve" })).toBe(
        "npx --package='/my projects/flagserve' flagserve",
      );
    });
  });
});
