/** The published package: what `npm pack` ships installs in an empty directory and runs. */
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  await run("npm", ["init", "-y"], { cwd: dir.file("app") });
  await run("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: dir.file("app") });
}, 180_000);

afterAll(() => dir?.remove());

describe("npm pack", () => {
  it("ships dist, bin, schema and the example, and no sources or tests", () => {
    expect(files).toEqual(expect.arrayContaining(["bin/flagserve.js", "dist/cli/main.js", "dist/index.js", "dist/index.d.ts", "schema/flagserve.schema.json", "flags.example.yaml", "README.md", "package.json"]));
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
});
