/**
 * The config watcher against real files and real chokidar. Every case waits (up to 3 s) for the
 * callback and checks the paths it names; irrelevant edits are given time to (not) show up.
 * Timing is printed on request (latency), never asserted.
 */
import { execFileSync } from "node:child_process";
import { mkdir, open, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { watchConfig, type ConfigWatcher, type WatchOptions } from "../../src/sources/watch.js";
import { tempDir, type TempDir } from "../helpers/files.js";

const WAIT_MS = 3000;
/** Longer than anything the watcher holds an event for (atomic 100 ms, stability 40 ms, debounce). */
const QUIET_MS = 600;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function temp(): Promise<TempDir> {
  const dir = await tempDir("flagserve-watch-");
  return dir;
}

interface Call {
  at: number;
  paths: string[];
}

/** A started watcher and every call it made. */
interface Recorder {
  calls: Call[];
  errors: Error[];
  watcher: ConfigWatcher;
  /** Resolves with the first call from index `from` on that names `path` (all calls when omitted). */
  waitFor(from: number, path?: string): Promise<Call>;
  /** Every path named in calls from index `from` on. */
  pathsSince(from: number): string[];
}

async function record(options: Omit<WatchOptions, "onChange"> & { onCall?: (paths: string[]) => void }): Promise<Recorder> {
  const calls: Call[] = [];
  const errors: Error[] = [];
  const waiters = new Set<() => void>();
  const watcher = await watchConfig({
    onError: (e) => errors.push(e),
    ...options,
    onChange(paths) {
      calls.push({ at: performance.now(), paths });
      options.onCall?.(paths);
      for (const w of waiters) w();
    },
  });
  cleanups.push(() => watcher.close());
  return {
    calls,
    errors,
    watcher,
    waitFor(from, path) {
      const find = () => calls.slice(from).find((c) => path === undefined || c.paths.includes(path));
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = find();
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no call naming ${path ?? "anything"} within ${WAIT_MS} ms; calls: ${JSON.stringify(calls.slice(from))}`));
        }, WAIT_MS);
        waiters.add(check);
        check();
      });
    },
    pathsSince: (from) => [...new Set(calls.slice(from).flatMap((c) => c.paths))].sort(),
  };
}

const Y1 = "flags:\n  a: { variants: { on: true }, defaultVariant: on }\n";
const Y2 = "flags:\n  a: { variants: { on: true, off: false }, defaultVariant: off }\n";

/** Kubernetes AtomicWriter layout: `..<ts>/<files>`, `..data -> ..<ts>`, `<file> -> ..data/<file>`. */
const TS1 = "..2026_11_21_00_00_00.000";
const TS2 = "..2026_11_21_00_01_00.000";
async function configMap(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(join(dir, TS1), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, TS1, name), text);
  await symlink(TS1, join(dir, "..data"));
  for (const name of Object.keys(files)) await symlink(join("..data", name), join(dir, name));
}
/** An update, as the kubelet does it: new timestamped dir, `..data_tmp` renamed over `..data`, old dir removed. */
async function configMapUpdate(dir: string, files: Record<string, string>, removeOld = true): Promise<void> {
  await mkdir(join(dir, TS2));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, TS2, name), text);
  await symlink(TS2, join(dir, "..data_tmp"));
  await rename(join(dir, "..data_tmp"), join(dir, "..data"));
  if (removeOld) await rm(join(dir, TS1), { recursive: true });
}

type Edit = (file: string) => Promise<void>;
const editors: [string, Edit][] = [
  ["in-place write", (f) => writeFile(f, Y2)],
  ["sed -i", async (f) => void execFileSync("sed", ["-i", "s/defaultVariant: on/defaultVariant: off/", f])],
  [
    "temp .#flags.yaml renamed over",
    async (f) => {
      await writeFile(join(f, "..", ".#flags.yaml"), Y2);
      await rename(join(f, "..", ".#flags.yaml"), f);
    },
  ],
  [
    "temp flags.yaml.tmp renamed over",
    async (f) => {
      await writeFile(`${f}.tmp`, Y2);
      await rename(`${f}.tmp`, f);
    },
  ],
  [
    "vim (4913 probe, swap file, backup rename, write, unlink backup)",
    async (f) => {
      const dir = join(f, "..");
      await writeFile(join(dir, ".flags.yaml.swp"), "swap");
      await writeFile(join(dir, "4913"), "");
      await unlink(join(dir, "4913"));
      await rename(f, `${f}~`);
      await writeFile(f, Y2);
      await unlink(`${f}~`);
      await unlink(join(dir, ".flags.yaml.swp"));
    },
  ],
  [
    "delete, re-create after 50 ms",
    async (f) => {
      await unlink(f);
      await sleep(50);
      await writeFile(f, Y2);
    },
  ],
  [
    "delete, re-create after 500 ms",
    async (f) => {
      await unlink(f);
      await sleep(500);
      await writeFile(f, Y2);
    },
  ],
  [
    "truncate, then write",
    async (f) => {
      const fh = await open(f, "r+");
      await fh.truncate(0);
      await sleep(10);
      await fh.write(Y2, 0);
      await fh.close();
    },
  ],
];

describe("directory PATH", () => {
  it.each(editors)("%s: reported with the file's path only", async (_name, edit) => {
    const dir = await temp();
    const file = await dir.write("flags/flags.yaml", Y1);
    const rec = await record({ path: join(dir.path, "flags") });
    await edit(file);
    await rec.waitFor(0, file);
    await sleep(QUIET_MS); // anything still in flight (temp files, backups) shows up by now
    expect(rec.pathsSince(0)).toEqual([file]);
    // The file is still watched after the edit (flagd lost it here).
    const n = rec.calls.length;
    await writeFile(file, Y1);
    await rec.waitFor(n, file);
  });

  it("environment subdirectories: their files, one appearing and one removed", async () => {
    const dir = await temp();
    const root = join(dir.path, "flags");
    const prodFlags = await dir.write("flags/prod/flags.yaml", Y1);
    await dir.write("flags/prod/segments.yml", "segments: {}\n");
    const rec = await record({ path: root });

    let n = rec.calls.length;
    await writeFile(prodFlags, Y2);
    await rec.waitFor(n, prodFlags);

    n = rec.calls.length;
    await mkdir(join(root, "staging"));
    await rec.waitFor(n, join(root, "staging"));

    n = rec.calls.length;
    const stagingFlags = join(root, "staging", "flags.json");
    await writeFile(stagingFlags, "{}");
    await rec.waitFor(n, stagingFlags);

    n = rec.calls.length;
    await rm(join(root, "prod"), { recursive: true });
    await rec.waitFor(n, join(root, "prod"));

    n = rec.calls.length;
    await writeFile(join(root, "qa.yaml"), Y1);
    await rec.waitFor(n, join(root, "qa.yaml"));
    await sleep(QUIET_MS);
    expect(rec.errors).toEqual([]);
  });

  it("ignores dot-files, temp and swap files, test files, other extensions, deeper levels and the PATH's siblings", async () => {
    const dir = await temp();
    const root = join(dir.path, "flags");
    await dir.write("flags/dev.yaml", Y1);
    await dir.write("flags/prod/flags.yaml", Y1);
    await dir.write("sibling.yaml", Y1); // next to PATH, in the directory actually watched
    const rec = await record({ path: root });

    await writeFile(join(dir.path, "sibling.yaml"), Y2);
    await writeFile(join(dir.path, "other.yaml"), Y2);
    await mkdir(join(dir.path, "other-dir"));
    await writeFile(join(dir.path, "other-dir", "x.yaml"), Y2);
    for (const name of [
      ".hidden.yaml",
      ".#dev.yaml",
      "dev.yaml.swp",
      ".dev.yaml.swp",
      "dev.yaml~",
      "dev.yaml.tmp",
      "4913",
      "README.md",
      "notes.txt",
      "dev.test.yaml",
      "prod.test.yml",
    ]) {
      await writeFile(join(root, name), "x");
      await writeFile(join(root, "prod", name), "x");
    }
    await unlink(join(root, "4913"));
    await mkdir(join(root, ".git"));
    await writeFile(join(root, ".git", "HEAD.yaml"), "x");
    await mkdir(join(root, "prod", "deeper"));
    await writeFile(join(root, "prod", "deeper", "flags.yaml"), Y2);
    await mkdir(join(root, ".cache"));
    await sleep(QUIET_MS);
    expect(rec.calls).toEqual([]);

    // Still alive: a relevant edit after all that is reported.
    await writeFile(join(root, "dev.yaml"), Y2);
    await rec.waitFor(0, join(root, "dev.yaml"));
  });

  it("Kubernetes ConfigMap: the ..data symlink swap is reported with the config files' paths", async () => {
    const dir = await temp();
    const root = join(dir.path, "config");
    await configMap(root, { "dev.yaml": Y1, "prod.yaml": Y1 });
    const rec = await record({ path: root });
    await configMapUpdate(root, { "dev.yaml": Y2, "prod.yaml": Y1 });
    await rec.waitFor(0, join(root, "dev.yaml"));
    await sleep(QUIET_MS);
    expect(rec.pathsSince(0)).toEqual([join(root, "dev.yaml"), join(root, "prod.yaml")]);
  });

  it("Kubernetes ConfigMap: a swap that keeps the old directory is reported too (realpath check)", async () => {
    const dir = await temp();
    const root = join(dir.path, "config");
    await configMap(root, { "dev.yaml": Y1 });
    const rec = await record({ path: root });
    await configMapUpdate(root, { "dev.yaml": Y2 }, false);
    await rec.waitFor(0, join(root, "dev.yaml"));
  });

  it("a PATH that is a symlink to a directory, swapped (git-sync): reported, and the new directory is watched", async () => {
    const dir = await temp();
    await dir.write("rev1/dev.yaml", Y1);
    await dir.write("rev2/dev.yaml", Y2);
    const root = join(dir.path, "current");
    await symlink("rev1", root);
    const rec = await record({ path: root });
    await symlink("rev2", join(dir.path, "current.tmp"));
    await rename(join(dir.path, "current.tmp"), root);
    await rm(join(dir.path, "rev1"), { recursive: true });
    await rec.waitFor(0, root);
    await sleep(QUIET_MS);
    const n = rec.calls.length;
    await writeFile(join(root, "new.yaml"), Y1);
    await rec.waitFor(n, join(root, "new.yaml"));
  });

  it("the config directory deleted and re-created", async () => {
    const dir = await temp();
    const root = join(dir.path, "flags");
    await dir.write("flags/dev.yaml", Y1);
    const rec = await record({ path: root });
    await rm(root, { recursive: true });
    await rec.waitFor(0, root);
    const n = rec.calls.length;
    await mkdir(root);
    await writeFile(join(root, "dev.yaml"), Y2);
    await rec.waitFor(n, join(root, "dev.yaml"));
  });

  it("a PATH that does not exist yet: its creation and its files", async () => {
    const dir = await temp();
    const root = join(dir.path, "flags");
    const rec = await record({ path: root });
    await mkdir(root);
    await rec.waitFor(0, root);
    const n = rec.calls.length;
    await writeFile(join(root, "dev.yaml"), Y1);
    await rec.waitFor(n, join(root, "dev.yaml"));
  });

  it("a config file that is a symlink to a file elsewhere: edits to the target are seen", async () => {
    const dir = await temp();
    const real = await dir.write("shared/dev.yaml", Y1);
    await mkdir(dir.file("flags"));
    const link = dir.file("flags/dev.yaml");
    await symlink(real, link);
    const rec = await record({ path: dir.file("flags") });
    await writeFile(real, Y2);
    await rec.waitFor(0, link);
    await sleep(QUIET_MS);
    let n = rec.calls.length;
    await writeFile(`${real}.tmp`, Y1); // saved by rename, as editors do
    await rename(`${real}.tmp`, real);
    await rec.waitFor(n, link);
    await sleep(QUIET_MS);
    n = rec.calls.length;
    await writeFile(real, Y2);
    await rec.waitFor(n, link);
  });

  it("debounces a burst into one call naming every file", async () => {
    const dir = await temp();
    const files = await Promise.all(["a", "b", "c", "d"].map((n) => dir.write(`flags/${n}.yaml`, Y1)));
    // A window that a slow machine's writes (and chokidar's stats of them) fit in, one after another.
    const debounceMs = 1000;
    const rec = await record({ path: join(dir.path, "flags"), debounceMs });
    for (const f of files) await writeFile(f, Y2);
    await rec.waitFor(0);
    await sleep(debounceMs + QUIET_MS); // a second call would have come by now (after its own window)
    expect(rec.calls).toHaveLength(1);
    expect(rec.calls[0]!.paths.sort()).toEqual(files.sort());
  });
});

describe("single-file PATH", () => {
  it.each(editors)("%s: reported", async (_name, edit) => {
    const dir = await temp();
    const file = await dir.write("flags.yaml", Y1);
    const rec = await record({ path: file });
    await edit(file);
    await rec.waitFor(0, file);
    await sleep(QUIET_MS);
    expect(rec.pathsSince(0)).toEqual([file]);
  });

  it("ignores every other file in its directory", async () => {
    const dir = await temp();
    const file = await dir.write("flags.yaml", Y1);
    await dir.write("other.yaml", Y1);
    const rec = await record({ path: file });
    await writeFile(dir.file("other.yaml"), Y2);
    await writeFile(dir.file("new.yaml"), Y2);
    await dir.write("sub/flags.yaml", Y2);
    await writeFile(dir.file("flags.yaml.bak"), Y2);
    await sleep(QUIET_MS);
    expect(rec.calls).toEqual([]);
  });

  it("Kubernetes ConfigMap: PATH is the symlink, ..data swapped", async () => {
    const dir = await temp();
    await configMap(dir.path, { "flags.yaml": Y1, "other.yaml": Y1 });
    const file = dir.file("flags.yaml");
    const rec = await record({ path: file });
    await configMapUpdate(dir.path, { "flags.yaml": Y2, "other.yaml": Y1 });
    await rec.waitFor(0, file);
    await sleep(QUIET_MS);
    expect(rec.pathsSince(0)).toEqual([file]);

    // And again, this time keeping the old directory (only the realpath check can see it).
    await rm(dir.file(TS1), { recursive: true, force: true });
    await mkdir(dir.file(TS1));
    await writeFile(join(dir.path, TS1, "flags.yaml"), Y1);
    const n = rec.calls.length;
    await symlink(TS1, dir.file("..data_tmp"));
    await rename(dir.file("..data_tmp"), dir.file("..data"));
    await rec.waitFor(n, file);
  });
});

describe("lifecycle", () => {
  it("close() resolves promptly and nothing is called afterwards, even with a call pending", async () => {
    const dir = await temp();
    const file = await dir.write("flags/dev.yaml", Y1);
    const rec = await record({ path: join(dir.path, "flags"), debounceMs: 300 });
    await writeFile(file, Y2);
    await sleep(150); // the change is seen and waiting in the debounce window
    await rec.watcher.close();
    await writeFile(file, Y1);
    await sleep(QUIET_MS);
    expect(rec.calls).toEqual([]);
    await rec.watcher.close(); // idempotent
  });

  it("passes chokidar errors to onError and keeps watching", async () => {
    const dir = await temp();
    const file = await dir.write("flags/dev.yaml", Y1);
    const rec = await record({ path: join(dir.path, "flags") });
    await symlink("loop.yaml", dir.file("flags/loop.yaml")); // stat fails with ELOOP
    await writeFile(file, Y2);
    await rec.waitFor(0, file);
    // The error may come after the edit's call (a busy machine): waited for, bounded.
    const codes = () => rec.errors.map((e) => (e as NodeJS.ErrnoException).code);
    for (let i = 0; i < WAIT_MS / 10 && !codes().includes("ELOOP"); i++) await sleep(10);
    expect(codes()).toContain("ELOOP");
  });

  it("an onChange that throws goes to onError", async () => {
    const dir = await temp();
    const file = await dir.write("flags.yaml", Y1);
    const errors: Error[] = [];
    const watcher = await watchConfig({
      path: file,
      onChange: () => {
        throw new Error("reload failed");
      },
      onError: (e) => errors.push(e),
    });
    cleanups.push(() => watcher.close());
    await writeFile(file, Y2);
    for (let i = 0; i < 300 && errors.length === 0; i++) await sleep(10);
    expect(errors.map((e) => e.message)).toEqual(["reload failed"]);
  });
});

/**
 * Every edit of a quick series is reported. `WATCH_LATENCY_EDITS=60 npx vitest run
 * test/sources/watch.test.ts` for a longer series with its edit-to-callback latency printed.
 */
const EDITS = Number(process.env.WATCH_LATENCY_EDITS ?? 10);
const PRINT_LATENCY = process.env.WATCH_LATENCY_EDITS !== undefined;

describe("a series of edits", () => {
  it(`edit-to-callback over ${EDITS} edits of each kind`, { timeout: 120_000 }, async () => {
    const dir = await temp();
    const file = await dir.write("flags/dev.yaml", Y1);
    const rec = await record({ path: join(dir.path, "flags") });
    const kinds: [string, (i: number) => Promise<void>][] = [
      ["in-place write", (i) => writeFile(file, i % 2 ? Y1 : Y2)],
      [
        "temp + rename",
        async (i) => {
          await writeFile(`${file}.tmp`, i % 2 ? Y1 : Y2);
          await rename(`${file}.tmp`, file);
        },
      ],
    ];
    for (const [kind, edit] of kinds) {
      const latencies: number[] = [];
      for (let i = 0; i < EDITS; i++) {
        const n = rec.calls.length;
        const t0 = performance.now();
        await edit(i);
        const call = await rec.waitFor(n, file);
        latencies.push(call.at - t0);
        await sleep(30);
      }
      expect(latencies).toHaveLength(EDITS);
      if (!PRINT_LATENCY) continue;
      latencies.sort((a, b) => a - b);
      const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
      console.log(
        `watch latency, ${kind}: n=${latencies.length} median=${q(0.5).toFixed(1)} ms p90=${q(0.9).toFixed(1)} ms ` +
          `p99=${q(0.99).toFixed(1)} ms max=${latencies.at(-1)!.toFixed(1)} ms`,
      );
    }
  });
});
