/** Where generated keys go by default: beside the configuration, or per user for one inside the package. */
import { mkdir, symlink } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { defaultStateDir, userStateDir } from "../../src/store/state-dir.js";
import { tempDir, type TempDir } from "../helpers/files.js";

let dir: TempDir;
beforeEach(async () => {
  dir = await tempDir("flagserve-state-dir-");
  await dir.write("pkg/flags.example.yaml", "flags: {}\n");
  await dir.write("project/flags/dev.yaml", "flags: {}\n");
});

describe("defaultStateDir", () => {
  const env = () => ({ XDG_STATE_HOME: dir.file("xdg") });

  it("is .flagserve beside a configuration outside the package", () => {
    expect(defaultStateDir(dir.file("project/flags"), env(), dir.file("pkg"))).toBe(dir.file("project/.flagserve"));
    expect(defaultStateDir(dir.file("project/flags/dev.yaml"), env(), dir.file("pkg"))).toBe(dir.file("project/flags/.flagserve"));
  });

  it("is a per-configuration directory under $XDG_STATE_HOME/flagserve for a configuration inside the package", () => {
    const state = defaultStateDir(dir.file("pkg/flags.example.yaml"), env(), dir.file("pkg"));
    expect(state).toMatch(new RegExp(`^${dir.file("xdg/flagserve/flags.example-")}[0-9a-f]{12}$`));
    // Stable for the same file, different for another copy of the package.
    expect(defaultStateDir(dir.file("pkg/flags.example.yaml"), env(), dir.file("pkg"))).toBe(state);
    expect(defaultStateDir(dir.file("pkg2/flags.example.yaml"), env(), dir.file("pkg2"))).not.toBe(state);
  });

  it("sees through symlinks: a linked package still counts as the package", async () => {
    await mkdir(dir.file("project/node_modules"), { recursive: true });
    await symlink(dir.file("pkg"), dir.file("project/node_modules/flagserve"));
    const viaLink = defaultStateDir(dir.file("project/node_modules/flagserve/flags.example.yaml"), env(), dir.file("pkg"));
    expect(viaLink).toBe(defaultStateDir(dir.file("pkg/flags.example.yaml"), env(), dir.file("pkg")));
  });
});

describe("userStateDir", () => {
  it("is $XDG_STATE_HOME/flagserve, else ~/.local/state/flagserve; a relative XDG_STATE_HOME is ignored (XDG spec)", () => {
    expect(userStateDir({ XDG_STATE_HOME: "/x/state" }, "linux")).toBe("/x/state/flagserve");
    expect(userStateDir({}, "darwin")).toBe(join(homedir(), ".local", "state", "flagserve"));
    expect(userStateDir({ XDG_STATE_HOME: "relative" }, "linux")).toBe(join(homedir(), ".local", "state", "flagserve"));
    expect(userStateDir({ LOCALAPPDATA: "C:\\Users\\ann\\AppData\\Local" }, "win32")).toBe(join("C:\\Users\\ann\\AppData\\Local", "flagserve"));
  });
});
