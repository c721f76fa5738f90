/**
 * `flagserve manifest`: writing flags.json, `--check` as a CI step (the real program: its exit
 * status is the point), and the problems it reports at file:line (in-process).
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { BUNDLED_EXAMPLE } from "../../src/cli/paths.js";
import { MANIFEST_SCHEMA_URL } from "../../src/evaluation/manifest.js";
import { cleanupAfterEach, run, runHere } from "./run.js";

const { dir } = cleanupAfterEach();

const DEVELOPMENT = `flags:
  new-checkout:
    variants: { on: true, off: false }
    defaultVariant: off
    metadata: { description: New checkout flow }
  max-upload-mb:
    variants: { small: 10, large: 100 }
    defaultVariant: small
`;
const PRODUCTION = DEVELOPMENT;

/**
 * What npm sets for `npx flagserve ...` (and `npm exec`): the hint must name the command the
 * reader typed, since a bare `flagserve` is not on their PATH (src/cli/invocation.ts).
 */
const NPX = { npm_command: "exec", npm_lifecycle_event: "npx", npm_config_package: "" };

describe("flagserve manifest --check (the program)", () => {
  it("exits 0 while flags.json is up to date and 1 once a flag's default changes, saying what differs and the npx command that updates it", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT, "flags/production.yaml": PRODUCTION });
    const written = await run(["manifest", "--env", "production"], { cwd: project.path });
    expect(written).toMatchObject({ code: 0, stdout: "wrote flags.json: 2 flags of production\n", stderr: "" });

    const check = () => run(["manifest", "--env", "production", "--check"], { cwd: project.path, env: NPX });
    expect(await check()).toMatchObject({ code: 0, stdout: "flags.json is up to date: 2 flags of production\n", stderr: "" });

    await project.write("flags/production.yaml", PRODUCTION.replace("defaultVariant: off", "defaultVariant: on"));
    expect(await check()).toEqual({
      code: 1,
      stdout: "",
      stderr: [
        "flags.json is not up to date with the flag files (1 difference):",
        "  new-checkout: defaultValue false in flags.json, true in the flag files",
        'flagserve manifest: "npx flagserve manifest --env production" updates it',
        "",
      ].join("\n"),
    });
  });
});

describe("flagserve manifest (in-process)", () => {
  it("writes the manifest of the flags every environment shares, and leaves the file alone when it is up to date", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT, "flags/production.yaml": PRODUCTION });
    const flags = project.file("flags");
    const output = project.file("out/flags.json");
    await project.mkdir("out");
    expect(await runHere(["manifest", flags, "-o", output])).toEqual({
      code: 0,
      stdout: `wrote ${output}: 2 flags common to development and production\n`,
      stderr: "",
    });
    const text = await readFile(output, "utf8");
    expect(JSON.parse(text)).toEqual({
      $schema: MANIFEST_SCHEMA_URL,
      flags: {
        "max-upload-mb": { flagType: "integer", defaultValue: 10 },
        "new-checkout": { flagType: "boolean", defaultValue: false, description: "New checkout flow" },
      },
    });
    const before = await stat(output);
    expect((await runHere(["manifest", flags, "-o", output])).stdout).toBe(
      `${output} is up to date: 2 flags common to development and production\n`,
    );
    expect((await stat(output)).mtimeMs).toBe(before.mtimeMs);
  });

  it("checks the data, not its layout: a reformatted file (prettier, openfeature pull) is up to date", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT });
    const output = project.file("flags.json");
    await writeFile(
      output,
      JSON.stringify({
        flags: {
          "new-checkout": { description: "New checkout flow", flagType: "boolean", defaultValue: false },
          "max-upload-mb": { defaultValue: 10, flagType: "integer", description: "" },
        },
      }),
    );
    const ran = await runHere(["manifest", project.file("flags"), "-o", output, "--check"]);
    expect(ran).toMatchObject({ code: 0, stderr: "" });
  });

  it("--check names flags added and removed, and a missing file", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT });
    const output = project.file("flags.json");
    const flags = project.file("flags");
    let ran = await runHere(["manifest", flags, "-o", output, "--check"], { env: NPX });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(`flagserve manifest: ${output} does not exist; "npx flagserve manifest ${flags} -o ${output}" writes it\n`);
    await writeFile(output, JSON.stringify({ flags: { "old-flag": { flagType: "string", defaultValue: "x" }, "new-checkout": {} } }));
    ran = await runHere(["manifest", flags, "-o", output, "--check"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr.split("\n").slice(0, 6)).toEqual([
      `${output} is not up to date with the flag files (5 differences):`,
      `  max-upload-mb: missing from ${output}`,
      `  new-checkout: flagType none in ${output}, "boolean" in the flag files`,
      `  new-checkout: defaultValue none in ${output}, false in the flag files`,
      `  new-checkout: description none in ${output}, "New checkout flow" in the flag files`,
      `  old-flag: in ${output}, no longer in the flag files`,
    ]);
  });

  it("writes to stdout with -o -, and refuses --check there", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT });
    const ran = await runHere(["manifest", project.file("flags"), "-o", "-"]);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).flags["max-upload-mb"]).toEqual({ flagType: "integer", defaultValue: 10 });
    const refused = await runHere(["manifest", project.file("flags"), "-o", "-", "--check"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: --check compares with a file/);
  });

  it("says why a file cannot be written or checked", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT, "flags.json": "{ not json" });
    const flags = project.file("flags");
    const missing = project.file("no-such-dir/flags.json");
    expect(await runHere(["manifest", flags, "-o", missing])).toEqual({
      code: 1,
      stdout: "",
      stderr: `flagserve manifest: cannot write ${missing}: ENOENT\n`,
    });
    const broken = await runHere(["manifest", flags, "-o", project.file("flags.json"), "--check"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`  ${project.file("flags.json")} is not JSON: `);
  });

  it("refuses to write the manifest inside a source, where it would be read as flags", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT });
    const ran = await runHere(["manifest", project.file("flags"), "-o", project.file("flags/flags.json")]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(`is inside the source ${project.file("flags")}, which would read it as flags`);
  });

  it("refuses it there when reached through a symlink to the source, and writes nothing", async () => {
    const project = await dir({ "flags/development.yaml": DEVELOPMENT });
    await project.link("flags-link", project.file("flags"));
    const ran = await runHere(["manifest", project.file("flags"), "-o", project.file("flags-link/flags.json")]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(`is inside the source ${project.file("flags")}, which would read it as flags`);
    await expect(stat(project.file("flags/flags.json"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("reports a flag without a defaultVariant at its file:line, and writes nothing", async () => {
    const project = await dir({ "flags/development.yaml": `${DEVELOPMENT}  beta:\n    variants: { on: true, off: false }\n` });
    const output = project.file("flags.json");
    const ran = await runHere(["manifest", project.file("flags"), "-o", output]);
    expect(ran).toEqual({
      code: 1,
      stdout: "",
      stderr: [
        `${project.file("flags/development.yaml")}:9 flag 'beta' has no defaultVariant, and the manifest needs its defaultValue: give it one of its variants (on, off)`,
        "flagserve manifest: 1 problem; nothing written",
        "",
      ].join("\n"),
    });
    await expect(stat(output)).rejects.toThrow(/ENOENT/);
  });

  it("without --env, reports where the environments disagree, and leaves out the flags not in all of them", async () => {
    const project = await dir({
      "flags/development.yaml": DEVELOPMENT.replace("defaultVariant: off", "defaultVariant: on"),
      "flags/production.yaml": `${PRODUCTION}  legacy:\n    variants: { x: x }\n    defaultVariant: x\n`,
    });
    const flags = project.file("flags");
    const ran = await runHere(["manifest", flags, "-o", "-"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr.split("\n")).toEqual([
      `${project.file("flags/development.yaml")}:4 flag 'new-checkout': default value true here; false in production`,
      `${project.file("flags/production.yaml")}:4 flag 'new-checkout': default value false here; true in development`,
      "The environments must agree on every flag they share; --env ENV writes the manifest of ENV alone.",
      "flagserve manifest: 2 problems; nothing written",
      "",
    ]);
    const one = await runHere(["manifest", flags, "-o", "-", "--env", "development"]);
    expect(one).toMatchObject({ code: 0, stderr: "" });

    await project.write("flags/development.yaml", DEVELOPMENT);
    const common = await runHere(["manifest", flags, "-o", "-"]);
    expect(common.code).toBe(0);
    expect(common.stderr).toBe(
      "note: left out 1 flag not defined in every environment: legacy (only in production); --env ENV describes all of ENV's\n",
    );
    expect(Object.keys(JSON.parse(common.stdout).flags)).toEqual(["max-upload-mb", "new-checkout"]);
  });

  it("reports the loader's problems (mixed variant types) and an unknown environment as eval does", async () => {
    const project = await dir({
      "flags/development.yaml": "flags:\n  f:\n    variants: { a: true, b: yes-string }\n    defaultVariant: a\n",
    });
    const flags = project.file("flags");
    const mixed = await runHere(["manifest", flags, "--env", "development", "-o", "-"]);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toMatch(/development\.yaml:3:\d+ variant 'b' is a string but variant 'a' is a boolean/);
    expect(mixed.stderr).toContain("environment 'development' has problems (listed above); fix them first");
    const unknown = await runHere(["manifest", flags, "--env", "staging", "-o", "-"]);
    expect(unknown).toMatchObject({ code: 1, stderr: `flagserve manifest: no environment 'staging' in ${flags} (known: development)\n` });
  });

  it("without ./flags, describes the bundled example and says so on stderr: which file, and how to describe yours", async () => {
    const project = await dir();
    const ran = await runHere(["manifest", "--env", "production", "-o", "-"], { cwd: project.path });
    expect(ran.code).toBe(0);
    expect(Object.keys(JSON.parse(ran.stdout).flags)).toHaveLength(5);
    expect(ran.stderr).toBe(
      `note: no ./flags here, so this is the bundled example's manifest (${BUNDLED_EXAMPLE}); pass a PATH or create ./flags to describe yours\n`,
    );
    await project.write("flags/production.yaml", PRODUCTION);
    expect(await runHere(["manifest", "--env", "production", "-o", "-"], { cwd: project.path })).toMatchObject({ code: 0, stderr: "" });
  });

  it("names each source as the reader would type it: sources given as absolute paths are shown relative to where they are", async () => {
    const project = await dir({ "team-a/development.yaml": DEVELOPMENT, "team-b/production.yaml": PRODUCTION });
    const sources = [project.file("team-a"), project.file("team-b")];
    const unknown = await runHere(["manifest", ...sources, "--env", "staging", "-o", "-"], { cwd: project.path });
    expect(unknown).toMatchObject({
      code: 1,
      stderr: "flagserve manifest: no environment 'staging' in team-a and team-b (known: development, production)\n",
    });
    await project.mkdir("empty-a");
    await project.mkdir("empty-b");
    const empty = await runHere(["manifest", project.file("empty-a"), project.file("empty-b"), "-o", "-"], { cwd: project.path });
    expect(empty).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^flagserve manifest: empty-a and empty-b: no environments found/),
    });
  });
});
