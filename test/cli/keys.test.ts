/** `flagserve keys [list]` and `keys rotate ENV`: output and exit codes. */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { TEST_KEY, OFREP_FIXTURE } from "../helpers/fixtures.js";
import { cleanupAfterEach, run } from "./run.js";

const t = cleanupAfterEach();
const NO_KEY = `flags:\n  f:\n    variants: { "on": true }\n    defaultVariant: "on"\n`;

describe("flagserve keys", () => {
  it("lists each environment with its key and where it is kept; `keys` alone is `keys list`", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/staging.yaml": NO_KEY });
    const list = await run(["keys", "list", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(list.code).toBe(0);
    expect(list.stderr).toBe("");
    const [staging, test] = list.stdout.trim().split("\n");
    expect(staging).toMatch(/^staging {2}fs_staging_\S{24} {2}\(state\)$/);
    expect(test).toBe(`test     ${TEST_KEY}  (file)`);
    // The generated key is kept: listing again (the short form) gives the same one.
    const again = await run(["keys", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(again.stdout).toBe(list.stdout);
    expect(JSON.parse(await readFile(dir.file("state/keys.json"), "utf8")).staging).toBe(staging!.split(/\s+/)[1]);
  });

  it("exits 1 when an environment has problems, listing the others", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/bad.yaml": "flags: [" });
    const { code, stdout, stderr } = await run(["keys", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stdout).toContain(TEST_KEY);
    expect(stderr).toMatch(/^flags\/bad\.yaml:1:\d+ /m);
    expect(stderr).toContain("bad: not listed, it has problems");
  });

  it("rotate: a new key where the old one lived; unknown environment -> exit 1 with the known ones", async () => {
    const dir = await t.dir({ "flags/test.yaml": OFREP_FIXTURE, "flags/staging.yaml": NO_KEY });
    const rotated = await run(["keys", "rotate", "test", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(rotated.code).toBe(0);
    const [, key] = rotated.stdout.match(/^test {2}(fs_test_\S+) {2}\(written to flags\/test\.yaml\)$/m)!;
    expect(await readFile(dir.file("flags/test.yaml"), "utf8")).toContain(`apiKey: ${key}\n`);

    const unknown = await run(["keys", "rotate", "prod", "flags", "--state-dir", "state"], { cwd: dir.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toBe("flagserve keys rotate: cannot rotate the key of 'prod': no such environment (known: staging, test)\n");
  });
});
