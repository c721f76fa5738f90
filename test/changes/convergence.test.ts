/**
 * Convergence: however and however fast the files are written, the served flags end equal to
 * the files, and the events sent are those of the net change. Real server, real HTTP, real files.
 */
import { serveFlagsDir } from "../helpers/server.js";
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  futimesSync,
  mkdirSync,
  openSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { BIN } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { openSse, type SseConnection } from "../helpers/sse.js";
import {
  ChangeLog,
  configMapWrite,
  flagFile,
  keyOf,
  mutate,
  noteWritten,
  random,
  servedFlags,
  waitServed,
  writeMethods,
  type Flags,
  type WriteMethod,
} from "../helpers/converge.js";

const KEY = "converge-key-0123456789";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(files: Record<string, string>, log?: ChangeLog): Promise<{ dir: TempDir; server: RunningServer }> {
  const dir = await tempDir("flagserve-converge-");
  for (const [name, text] of Object.entries(files)) await dir.write(name, text);
  const server = await serveFlagsDir(dir, { onChanges: log?.record });
  cleanups.push(() => server.close());
  return { dir, server };
}

async function listen(url: string): Promise<SseConnection> {
  const sse = await openSse(`${url}/api/v1/flags/events`, { "x-api-key": KEY, accept: "text/event-stream" });
  cleanups.push(() => sse.close());
  return sse;
}

/** As `cp` does: the new text goes to a temp file, copied over the original in place. */
function copyOver(file: string, edit: (text: string) => string): void {
  const tmp = `${file}.new`;
  writeFileSync(tmp, edit(readFileSync(file, "utf8")));
  copyFileSync(tmp, file);
}

const FRESH = '  fresh-flag:\n    variants: { on: true }\n    defaultVariant: "on"\n';

describe("the issue's reproduction", () => {
  it("edits copied over in place right after the previous edit's event: none is lost", async () => {
    const { dir, server } = await serve({
      "flags/dev.yaml": `apiKey: ${KEY}\nflags:\n  a:\n    variants: { on: true }\n    defaultVariant: "on"\n`,
    });
    const sse = await listen(server.url);
    const file = dir.file("flags/dev.yaml");
    const isFresh = (b: { event?: string; data?: string }) => b.event === "flag-updated" && JSON.parse(b.data!).flagKey === "fresh-flag";
    for (let i = 0; i < 30; i++) {
      let from = sse.blocks.length;
      copyOver(file, (s) => s.replace("flags:\n", `flags:\n${FRESH}`));
      await sse.next(isFresh, 3000, from);
      from = sse.blocks.length;
      copyOver(file, (s) => s.replace(FRESH, ""));
      await sse.next(isFresh, 3000, from);
    }
  }, 120_000);
});

interface Sequence {
  /** Environment names; each is `<name>.yaml` in the config directory unless `layout` says otherwise. */
  envs: string[];
  edits: number;
  /** Writes the new versions of the environments in `changed`. */
  write(root: string, versions: Record<string, Flags>, changed: string[], edit: number): Promise<void>;
  /** Creates the initial files instead (ConfigMap layout). */
  layout?(root: string, versions: Record<string, Flags>): void;
  /** Files that are there from the start and never edited, by name. */
  fixed?: Record<string, string>;
  /** How many flags each environment starts with (2). */
  flags?: number;
}

const writeEach =
  (method: WriteMethod): Sequence["write"] =>
  async (root, versions, changed) => {
    for (const env of changed) await method(join(root, `${env}.yaml`), flagFile(keyOf(env), versions[env]!));
  };

/**
 * Runs a sequence of edits with random gaps of 0 to 80 ms (so edits land before, during and
 * after reloads), then checks convergence: HTTP answers equal to the files; the change log's
 * last word per flag equal to the final value, with no value that was never written; and one
 * SSE `flag-updated` per change applied.
 */
/** The built server (dist/), as the CLI runs it: edits are parsed in the parse worker, which cannot run from the sources. */
const { startServer: startBuiltServer } = (await import(new URL("../../dist/server/server.js", import.meta.url).href)) as {
  startServer: typeof startServer;
};

async function runSequence(seq: Sequence, seed: number, start: typeof startServer = startServer): Promise<void> {
  const rand = random(seed);
  let counter = 1;
  const next = () => counter++;
  const flags = () => Object.fromEntries(Array.from({ length: seq.flags ?? 2 }, (_, i) => [`f${i}`, next()]));
  let versions: Record<string, Flags> = Object.fromEntries(seq.envs.map((env) => [env, flags()]));
  const initial = versions;
  const written = new Map<string, Set<number>>();
  for (const env of seq.envs) noteWritten(written, env, versions[env]!);

  const dir = await tempDir("flagserve-converge-");
  const root = dir.file("flags");
  mkdirSync(root);
  if (seq.layout) seq.layout(root, versions);
  else for (const env of seq.envs) writeFileSync(join(root, `${env}.yaml`), flagFile(keyOf(env), versions[env]!));
  for (const [name, text] of Object.entries(seq.fixed ?? {})) writeFileSync(join(root, name), text);
  const log = new ChangeLog();
  const server = await serveFlagsDir(dir, { onChanges: log.record }, start);
  cleanups.push(() => server.close());
  const streams = await Promise.all(
    seq.envs.map((env) => openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": keyOf(env), accept: "text/event-stream" })),
  );
  for (const s of streams) cleanups.push(() => s.close());

  for (let i = 0; i < seq.edits; i++) {
    const changed = seq.envs.filter((_, n) => n === 0 || rand() < 0.5);
    versions = { ...versions };
    for (const env of changed) {
      versions[env] = mutate(versions[env]!, rand, next);
      noteWritten(written, env, versions[env]!);
    }
    await seq.write(root, versions, changed, i + 1);
    await sleep(rand() * 80);
  }

  const context = `seed ${seed}`;
  expect(await waitServed(server.url, versions), context).toEqual(versions);
  expect(log.check(initial, versions, written), context).toEqual([]);
  const flagEvents = () =>
    streams.flatMap((s, n) =>
      s
        .events()
        .filter((b) => b.event === "flag-updated")
        .map((b) => `${seq.envs[n]}/${JSON.parse(b.data!).flagKey}`),
    );
  for (let t = 0; t < 100 && flagEvents().length < log.count; t++) await sleep(20);
  expect(flagEvents().length, context).toBe(log.count);
  expect(new Set(flagEvents()), context).toEqual(new Set(log.byFlag.keys()));
}

/** Two sequences per case in the suite; `CONVERGE_SEEDS=50 npx vitest run test/changes/convergence.test.ts` for a soak. */
const SEEDS = Array.from({ length: Number(process.env.CONVERGE_SEEDS ?? 2) }, (_, i) => i + 1);

describe("rapid edits, 0-80 ms apart: the served flags converge to the files", () => {
  for (const [name, method] of Object.entries(writeMethods)) {
    it.each(SEEDS)(`one file, ${name} (seed %i)`, async (seed) => {
      await runSequence({ envs: ["dev"], edits: 25, write: writeEach(method) }, seed);
    });
  }

  it.each(SEEDS)("several files at once, each write method in turn, like a git checkout (seed %i)", async (seed) => {
    const methods = Object.values(writeMethods);
    await runSequence(
      {
        envs: ["dev", "qa", "prod"],
        edits: 20,
        write: (root, versions, changed, edit) => writeEach(methods[edit % methods.length]!)(root, versions, changed, edit),
      },
      seed,
    );
  });

  it.each(SEEDS)("edits while a reload is running: a large environment beside makes every reload slow (seed %i)", async (seed) => {
    const large = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`big-${i}`, i]));
    await runSequence(
      {
        envs: ["dev"],
        edits: 25,
        write: writeEach(writeMethods["copied over in place"]!),
        fixed: { "large.yaml": flagFile(keyOf("large"), large) },
      },
      seed,
    );
  });

  it.each(SEEDS)("a ConfigMap volume, its ..data link swapped on every update (seed %i)", async (seed) => {
    const files = (versions: Record<string, Flags>) =>
      Object.fromEntries(Object.entries(versions).map(([env, flags]) => [`${env}.yaml`, flagFile(keyOf(env), flags)]));
    await runSequence(
      {
        envs: ["dev", "qa"],
        edits: 20,
        layout: (root, versions) => configMapWrite(root, 0, files(versions)),
        write: async (root, versions, _changed, edit) => configMapWrite(root, edit, files(versions)),
      },
      seed,
    );
  });
});

describe("the same with the parse worker (the built server): each changed file parsed off the serving thread", () => {
  // One sequence per case in the suite, CONVERGE_SEEDS in a soak.
  const seeds = process.env.CONVERGE_SEEDS ? SEEDS : SEEDS.slice(0, 1);
  // Files of 120 flags (6 KB), each edit parsed whole in the worker and its flags reused by their text.
  for (const [name, method] of Object.entries(writeMethods)) {
    it.each(seeds)(`one file, ${name} (seed %i)`, async (seed) => {
      await runSequence({ envs: ["dev"], edits: 25, flags: 120, write: writeEach(method) }, seed, startBuiltServer);
    });
  }

  it.each(seeds)("several files at once, each write method in turn, beside a large environment (seed %i)", async (seed) => {
    const methods = Object.values(writeMethods);
    const large = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`big-${i}`, i]));
    await runSequence(
      {
        envs: ["dev", "qa", "prod"],
        edits: 20,
        flags: 120,
        write: (root, versions, changed, edit) => writeEach(methods[edit % methods.length]!)(root, versions, changed, edit),
        fixed: { "large.yaml": flagFile(keyOf("large"), large) },
      },
      seed,
      startBuiltServer,
    );
  });
});

describe("a half-written file never loads", () => {
  it("a slow writer whose every prefix is a valid file (chunks at flag boundaries, 10 ms apart): no flag is ever announced deleted", async () => {
    const flags = (v: number) => Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, v]));
    const log = new ChangeLog();
    const { dir, server } = await serve({ "flags/dev.yaml": flagFile(keyOf("dev"), flags(1)) }, log);
    for (const v of [2, 3]) {
      const text = flagFile(keyOf("dev"), flags(v));
      const chunks = text.split(/(?=\n  f)/); // every prefix parses as a smaller, valid flag set
      const fd = openSync(dir.file("flags/dev.yaml"), "w");
      // Each chunk written synchronously from a timer 10 ms after the last: the gaps are 10 ms
      // whatever else this process does (the server, here, and the polling below). Each prefix's
      // mtime is set ahead of our clock: a stall of this process between a write and setting the
      // next timer cannot make the prefix look settled to the server (its window counts from when
      // it first sees it, and the next write is due before that window ends).
      const written = new Promise<void>((resolve) => {
        const writeNext = (i: number) => {
          writeSync(fd, chunks[i]!);
          if (i + 1 < chunks.length) {
            futimesSync(fd, new Date(), new Date(Date.now() + 60_000));
            setTimeout(() => writeNext(i + 1), 10);
          } else resolve(closeSync(fd));
        };
        writeNext(0);
      });
      const seen: number[] = [];
      let writing = true;
      void written.then(() => (writing = false));
      while (writing) seen.push(Object.keys((await servedFlags(server.url, keyOf("dev"))) ?? {}).length);
      expect(await waitServed(server.url, { dev: flags(v) })).toEqual({ dev: flags(v) });
      expect(
        seen.every((n) => n === 12),
        `flags served while writing: ${seen}`,
      ).toBe(true);
    }
    expect([...log.byFlag.values()].flat()).not.toContain(undefined); // no deletion announced
    expect(log.byFlag.get("dev/f0")).toEqual([2, 3]);
  });

  it("written in two halves 10 ms apart, the first half a valid file without the last flag: only whole versions are served and announced", async () => {
    const log = new ChangeLog();
    const flags = (v: number) => ({ a: v, b: v, c: v, last: v });
    const { dir, server } = await serve({ "flags/dev.yaml": flagFile(keyOf("dev"), flags(1)) }, log);
    const sse = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": keyOf("dev"), accept: "text/event-stream" });
    cleanups.push(() => sse.close());
    const file = dir.file("flags/dev.yaml");
    for (let v = 2; v <= 11; v++) {
      const text = flagFile(keyOf("dev"), flags(v));
      const half = text.slice(0, text.indexOf("  last:")); // parses: a, b and c at v, `last` gone
      const fd = openSync(file, "w");
      writeSync(fd, half);
      // Its mtime ahead of our clock: however long this machine takes before the timer below is
      // set, the half has not settled when read (the window counts from when the read first sees it).
      futimesSync(fd, new Date(), new Date(Date.now() + 60_000));
      // Synchronous, from a timer due before the reader's: the order does not depend on load.
      await new Promise<void>((resolve) => setTimeout(() => (writeSync(fd, text.slice(half.length)), closeSync(fd), resolve()), 10));
      expect(await waitServed(server.url, { dev: flags(v) })).toEqual({ dev: flags(v) });
    }
    expect(log.byFlag.get("dev/last")).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]); // never announced deleted
    const announced = () => sse.events().filter((b) => b.event === "flag-updated").length;
    for (let t = 0; t < 100 && announced() < log.count; t++) await sleep(20);
    expect(announced()).toBe(log.count);
  });
});

describe("files that are not flag files cost a problem, not the server", () => {
  it("a FIFO, a symlink to /dev/zero and a file over the size cap: problems for their environments; the rest reloads and the server closes", async () => {
    const dir = await tempDir("flagserve-converge-");
    const root = dir.file("flags");
    mkdirSync(root);
    writeFileSync(join(root, "dev.yaml"), flagFile(keyOf("dev"), { a: 1 }));
    execFileSync("mkfifo", [join(root, "fifo.yaml")]);
    symlinkSync("/dev/zero", join(root, "zero.yaml"));
    writeFileSync(join(root, "huge.yaml"), "");
    truncateSync(join(root, "huge.yaml"), 10 * 1024 * 1024 + 1);
    const server = await serveFlagsDir(dir, { allowInvalid: true });
    cleanups.push(() => server.close());

    const ready = await (await fetch(`${server.url}/readyz`)).json();
    expect(ready).toMatchObject({ status: "degraded", environments: 1 });
    expect(ready.problems).toEqual([
      `${join(root, "fifo.yaml")}:0:0 not a regular file (a FIFO): only regular files are read`,
      `${join(root, "huge.yaml")}:0:0 file is larger than 10 MiB (10485761 bytes)`,
      `${join(root, "zero.yaml")}:0:0 not a regular file (a character device): only regular files are read`,
    ]);
    // Reloads still run: an edit to the good file is served.
    writeFileSync(join(root, "dev.yaml"), flagFile(keyOf("dev"), { a: 2 }));
    expect(await waitServed(server.url, { dev: { a: 2 } })).toEqual({ dev: { a: 2 } });
    // A FIFO replaced by a regular file is read (the check sees the new file).
    writeFileSync(join(root, "fifo.yaml.tmp"), flagFile(keyOf("fifo"), { b: 1 }));
    execFileSync("mv", [join(root, "fifo.yaml.tmp"), join(root, "fifo.yaml")]);
    expect(await waitServed(server.url, { dev: { a: 2 }, fifo: { b: 1 } })).toEqual({ dev: { a: 2 }, fifo: { b: 1 } });
    await server.close(); // returns: nothing is stuck reading
  });
});

/**
 * root reads a mode-000 directory anyway, so as root (as in this project's containers) the server
 * runs as `nobody` through setpriv, for the permission to bite; as any other user, as itself.
 */
const asRoot = process.getuid?.() === 0;
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));

describe("a config directory unreadable for a while", () => {
  it.skipIf(asRoot && !SETPRIV)(
    "chmod 000 until reads fail, edited meanwhile: served once readable again, and later edits too",
    async () => {
      const dir = await tempDir("flagserve-converge-");
      const root = dir.file("flags");
      const file = join(root, "dev.yaml");
      mkdirSync(root);
      writeFileSync(file, flagFile(keyOf("dev"), { a: 1 }));
      const args = [BIN, root, "--port", "0", "--state-dir", dir.file("state")];
      if (asRoot) {
        chmodSync(dir.path, 0o755);
        for (const p of [dir.path, root, file]) chownSync(p, 65534, 65534);
      }
      const child = asRoot
        ? spawn(SETPRIV!, ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...args])
        : spawn(process.execPath, args);
      cleanups.push(() => child.kill("SIGKILL"));
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
      child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
      for (let t = 0; t < 300 && !/^ready /m.test(out); t++) await sleep(50);
      const url = /^ready (\S+)/m.exec(out)?.[1];
      expect(url, out).toBeDefined();

      // Unreadable until the server has failed to read it, and again after the edit (at most 2 s each).
      const failedReads = () => err.match(/cannot read directory: EACCES/g)?.length ?? 0;
      const failedReadAfter = async (count: number) => {
        for (let t = 0; t < 100 && failedReads() <= count; t++) await sleep(20);
      };
      chmodSync(root, 0o000);
      await failedReadAfter(0);
      expect(failedReads(), err).toBeGreaterThan(0);
      const before = failedReads();
      writeFileSync(file, flagFile(keyOf("dev"), { a: 2 })); // root may still write it
      await failedReadAfter(before);
      chmodSync(root, 0o755);
      expect(await waitServed(url!, { dev: { a: 2 } })).toEqual({ dev: { a: 2 } });
      for (const value of [3, 4]) {
        writeFileSync(file, flagFile(keyOf("dev"), { a: value }));
        expect(await waitServed(url!, { dev: { a: value } })).toEqual({ dev: { a: value } });
      }
    },
  );
});

describe("the key state file", () => {
  it.each(Object.keys(writeMethods))("rewritten rapidly (%s): the last key written is the one that works", async (name) => {
    const dir = await tempDir("flagserve-converge-");
    const root = dir.file("flags");
    const keysFile = dir.file("state/keys.json");
    mkdirSync(dir.file("state"));
    writeFileSync(keysFile, JSON.stringify({ dev: "dev-key-0" }));
    mkdirSync(root);
    writeFileSync(join(root, "dev.yaml"), "flags:\n  a:\n    variants: { v: 1 }\n    defaultVariant: v\n");
    const server = await serveFlagsDir(dir, { keyGraceSeconds: 0 });
    cleanups.push(() => server.close());
    const rand = random(7);
    for (let i = 1; i <= 10; i++) {
      await writeMethods[name]!(keysFile, JSON.stringify({ dev: `dev-key-${i}` }));
      await sleep(rand() * 80);
    }
    const works = async (key: string) =>
      (await fetch(`${server.url}/ofrep/v1/evaluate/flags/a`, { method: "POST", headers: { "x-api-key": key } })).status === 200;
    // Up to 12 s: on a loaded machine (CI, files in parallel) a reload can wait its turn for long.
    for (let t = 0; t < 600 && !(await works("dev-key-10")); t++) await sleep(20);
    expect(await works("dev-key-10")).toBe(true);
    expect(server.keys()).toEqual({ dev: "dev-key-10" });
    expect(await works("dev-key-9")).toBe(false);
  });
});
