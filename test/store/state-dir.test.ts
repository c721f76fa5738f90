/**
 * Where state lives (one private directory per configuration, per user) and what is refused:
 * directories and files another user owns or others may write. Writers over one directory
 * never lose each other's keys.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { chmod, chown, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { readAdminToken, resolveAdminToken } from "../../src/admin/token.js";
import { readKeyState, recordRotation, resolveKeys, stateFilePath, updateKeyState } from "../../src/store/keys.js";
import { STATE_FILE_MODE, writeFileDurable } from "../../src/store/durable-write.js";
import { checkPrivate, defaultStateDir, openStateDir, StateDirError, userStateDir } from "../../src/store/state-dir.js";
import { tempDir, type TempDir } from "../helpers/files.js";

/** A user id that is not ours: the tests run as root here, so they can give files away. */
const OTHER_UID = 65534;
const isRoot = process.getuid?.() === 0;

let dir: TempDir;
beforeEach(async () => {
  dir = await tempDir("flagserve-state-dir-");
  await dir.write("a/dev.yaml", "flags: {}\n");
  await dir.write("b/dev.yaml", "flags: {}\n");
  await dir.write("pkg/flags.example.yaml", "flags: {}\n");
});

describe("defaultStateDir", () => {
  const env = () => ({ XDG_STATE_HOME: dir.file("xdg") });

  it("is a per-user directory named after the configuration, never beside the served path", () => {
    const a = defaultStateDir([dir.file("a")], env());
    expect(a).toMatch(new RegExp(`^${dir.file("xdg/flagserve/a-")}[0-9a-f]{12}$`));
    expect(defaultStateDir([dir.file("pkg/flags.example.yaml")], env())).toMatch(
      new RegExp(`^${dir.file("xdg/flagserve/flags.example-")}[0-9a-f]{12}$`),
    );
  });

  it("differs for sibling configurations (a/ and b/ shared $TMPDIR/.flagserve before) and for another list of sources", () => {
    const a = defaultStateDir([dir.file("a")], env());
    expect(defaultStateDir([dir.file("b")], env())).not.toBe(a);
    expect(defaultStateDir([dir.file("a"), dir.file("b")], env())).not.toBe(a);
    expect(defaultStateDir(["https://config.example/flags.yaml"], env())).toMatch(/\/config\.example-[0-9a-f]{12}$/);
  });

  it("is the same for the same configuration: relative or absolute, through a symlink, from another working directory", async () => {
    const a = defaultStateDir([dir.file("a")], env());
    expect(defaultStateDir(["a"], env(), dir.path)).toBe(a);
    expect(defaultStateDir(["../a"], env(), dir.file("b"))).toBe(a);
    await symlink(dir.file("a"), dir.file("link"));
    expect(defaultStateDir([dir.file("link")], env())).toBe(a);
    expect(defaultStateDir(dir.file("a"), env())).toBe(a);
  });
});

describe("userStateDir", () => {
  it("is $XDG_STATE_HOME/flagserve, else ~/.local/state/flagserve; a relative XDG_STATE_HOME is ignored (XDG spec)", () => {
    expect(userStateDir({ XDG_STATE_HOME: "/x/state" }, "linux")).toBe("/x/state/flagserve");
    expect(userStateDir({}, "darwin")).toBe(join(homedir(), ".local", "state", "flagserve"));
    expect(userStateDir({ XDG_STATE_HOME: "relative" }, "linux")).toBe(join(homedir(), ".local", "state", "flagserve"));
    expect(userStateDir({ LOCALAPPDATA: "C:\\Users\\ann\\AppData\\Local" }, "win32")).toBe(
      join("C:\\Users\\ann\\AppData\\Local", "flagserve"),
    );
  });
});

describe("private state", () => {
  const dirStats = (uid: number, mode: number) => ({ uid, mode, isDirectory: () => true });
  const fileStats = (uid: number, mode: number) => ({ uid, mode, isDirectory: () => false });

  it("refuses what another user owns or others may write, saying why and how to fix it (as ssh does)", () => {
    expect(() => checkPrivate("/s", dirStats(1000, 0o40700), 1000)).not.toThrow();
    expect(() => checkPrivate("/s/keys.json", fileStats(1000, 0o100640), 1000)).not.toThrow();
    expect(() => checkPrivate("/s", dirStats(1001, 0o40700), 1000)).toThrow(
      /^refusing state directory \/s: it belongs to another user \(uid 1001, you are 1000\).*pass --state-dir/,
    );
    expect(() => checkPrivate("/s", dirStats(1000, 0o40777), 1000)).toThrow(
      "refusing state directory /s: other users may write it (mode 0777); fix it with: chmod 700 /s",
    );
    expect(() => checkPrivate("/s/admin-token", fileStats(1000, 0o100620), 1000)).toThrow(
      "refusing state file /s/admin-token: other users may write it (mode 0620); fix it with: chmod 600 /s/admin-token",
    );
    expect(() => checkPrivate("/s", dirStats(1001, 0o40777), null)).not.toThrow(); // no user ids (Windows)
  });

  it("creates the directory 0700 and its files 0600", async () => {
    const state = dir.file("xdg/flagserve/a-0123");
    await resolveKeys(state, [{ name: "dev" }]);
    await resolveAdminToken(state, undefined, {});
    expect((await stat(state)).mode & 0o777).toBe(0o700);
    expect((await stat(stateFilePath(state))).mode & 0o777).toBe(0o600);
    expect((await stat(join(state, "admin-token"))).mode & 0o777).toBe(0o600);
    await writeFileDurable(dir.file("other"), "x", { mode: STATE_FILE_MODE });
    expect((await stat(dir.file("other"))).mode & 0o777).toBe(0o600);
    // A file of the user's (overrides, a flag file saved from the page) keeps its own mode.
    await chmod(dir.file("other"), 0o644);
    await writeFileDurable(dir.file("other"), "y");
    expect((await stat(dir.file("other"))).mode & 0o777).toBe(0o644);
  });

  it("refuses a group- or world-writable state directory", async () => {
    const state = await dir.mkdir("shared");
    await chmod(state, 0o777);
    await expect(openStateDir(state)).rejects.toThrow(/other users may write it \(mode 0777\)/);
    await expect(resolveKeys(state, [{ name: "dev" }])).rejects.toBeInstanceOf(StateDirError);
  });

  it.runIf(isRoot)("never adopts a keys.json or admin-token planted by another user, nor a directory they made", async () => {
    const state = await dir.mkdir("planted");
    await chmod(state, 0o700);
    await writeFile(join(state, "keys.json"), '{"dev":"planted-key-123"}\n', { mode: 0o644 });
    await writeFile(join(state, "admin-token"), "planted-token-0123456789\n", { mode: 0o644 });
    await chown(join(state, "keys.json"), OTHER_UID, OTHER_UID);
    await chown(join(state, "admin-token"), OTHER_UID, OTHER_UID);
    await expect(readKeyState(state)).rejects.toThrow(/refusing state file .*keys\.json: it belongs to another user/);
    await expect(resolveKeys(state, [{ name: "dev" }])).rejects.toBeInstanceOf(StateDirError);
    await expect(readAdminToken(state)).rejects.toThrow(/refusing state file .*admin-token: it belongs to another user/);
    await expect(resolveAdminToken(state, undefined, {})).rejects.toBeInstanceOf(StateDirError);

    const theirs = await dir.mkdir("theirs");
    await chown(theirs, OTHER_UID, OTHER_UID);
    await expect(openStateDir(theirs)).rejects.toThrow(/refusing state directory .*theirs: it belongs to another user/);
    // A symlink of ours to a file of theirs is theirs.
    const mine = await dir.mkdir("mine");
    await symlink(join(state, "keys.json"), join(mine, "keys.json"));
    await expect(readKeyState(mine)).rejects.toThrow(/belongs to another user/);
  });
});

describe("writers over one state directory", () => {
  it("never lose each other's keys: 20 loads generating keys at once all end up in keys.json", async () => {
    const state = dir.file("state");
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => resolveKeys(state, [{ name: `env${i}` }])));
    const kept = JSON.parse(await readFile(stateFilePath(state), "utf8")) as Record<string, string>;
    expect(Object.keys(kept)).toHaveLength(20);
    results.forEach((r, i) => expect(kept[`env${i}`]).toBe(r.keys.get(`env${i}`)));
  });

  it("that generate the same environment's key at once agree on one key", async () => {
    const state = dir.file("state");
    const results = await Promise.all(Array.from({ length: 10 }, () => resolveKeys(state, [{ name: "dev" }])));
    const keys = new Set(results.map((r) => r.keys.get("dev")));
    expect(keys.size).toBe(1);
    expect((await readKeyState(state)).dev).toBe([...keys][0]);
  });

  it("write nothing when nothing changed: a write by someone who takes no lock is not undone by a copy of what it replaced", async () => {
    const state = await openStateDir(dir.file("state"));
    await writeFileDurable(stateFilePath(state), `${JSON.stringify({ dev: "written-by-hand-1" })}\n`, { mode: STATE_FILE_MODE });
    const before = await stat(stateFilePath(state), { bigint: true });
    // A load that generates nothing, as one that read the file while it was being replaced and then finds the key under the lock.
    expect(await updateKeyState(state, (keys) => Object.keys(keys))).toEqual(["dev"]);
    const after = await stat(stateFilePath(state), { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
    // A change is written.
    await updateKeyState(state, (keys) => void (keys.qa = "qa-key-0123456789"));
    expect(await readKeyState(state)).toEqual({ dev: "written-by-hand-1", qa: "qa-key-0123456789" });
  });

  it("create keys.json only if it is still missing: one written by hand meanwhile is read, not replaced", async () => {
    const state = await openStateDir(dir.file("state"));
    let calls = 0;
    const generated = await updateKeyState(state, (keys) => {
      // The first time, the file is missing; a person writes it before the generated key lands.
      if (calls++ === 0) writeFileSync(stateFilePath(state), JSON.stringify({ dev: "written-by-hand-1" }), { mode: 0o600 });
      if (keys.dev !== undefined) return [];
      keys.dev = "generated-key-0123456789";
      return ["dev"];
    });
    expect([calls, generated]).toEqual([2, []]);
    expect(await readKeyState(state)).toEqual({ dev: "written-by-hand-1" });
    expect(readdirSync(state).filter((name) => name.startsWith("keys.json."))).toEqual([]); // no temporary file left
  });

  it("write a new file exclusively when asked: an existing one is kept, and the write fails with EEXIST", async () => {
    const file = dir.file("exclusive.json");
    await writeFileDurable(file, "first", { mode: STATE_FILE_MODE, exclusive: true });
    await expect(writeFileDurable(file, "second", { exclusive: true })).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readFile(file, "utf8")).toBe("first");
    expect((await stat(file)).mode & 0o777).toBe(STATE_FILE_MODE);
  });

  it("keep every rotation record and one admin token", async () => {
    const state = dir.file("state");
    await Promise.all(Array.from({ length: 10 }, (_, i) => recordRotation(state, `env${i}`, `old-key-${i}`, 0)));
    expect(Object.keys(JSON.parse(await readFile(join(state, "rotations.json"), "utf8")))).toHaveLength(10);
    const tokens = await Promise.all(Array.from({ length: 10 }, () => resolveAdminToken(state, undefined, {})));
    expect(new Set(tokens.map((t) => t.token)).size).toBe(1);
    expect(await readAdminToken(state)).toBe(tokens[0]!.token);
  });
});

it("a state directory that does not exist yet is made with its parents", async () => {
  expect(await openStateDir(dir.file("new/deeper"))).toBe(dir.file("new/deeper"));
  expect((await stat(dir.file("new/deeper"))).mode & 0o777).toBe(0o700);
});
