/**
 * Edits cost what they change: with the memo a server keeps across its reloads, an edit re-reads
 * and parses only its file, validates and compiles only its flags (and the flags that use a
 * changed segment), and everything else is reused by reference. The work is counted, not timed.
 */
import { utimesSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyLoad, type ReloadContext } from "../../src/changes/reload.js";
import { loadConfig, LoadMemo, loadInlineConfig } from "../../src/config/index.js";
import { FileSource } from "../../src/sources/files-source.js";
import { loadSourceReads, loadSources } from "../../src/config/index.js";
import { EMPTY_SETTLE_MS, readStableFile } from "../../src/sources/files.js";
import { InputSet } from "../../src/sources/inputs.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { configEtagOf } from "../../src/store/snapshot.js";
import { reloadContext } from "../helpers/server.js";
import { randomEdits } from "../helpers/random-edits.js";

/** An environment file of `count` flags; flag i uses segment `beta` when i % 4 === 1, `internal` (which uses `beta`) when i % 4 === 2. */
function envFile(
  env: string,
  count: number,
  edits: { defaultVariant?: Record<number, string>; beta?: string; broken?: number } = {},
): string {
  const out = [
    `apiKey: key-${env}-0123456789`,
    "segments:",
    `  beta: { ends_with: [{ var: email }, "${edits.beta ?? "@example.com"}"] }`,
    "  internal: { and: [{ $ref: beta }, { starts_with: [{ var: targetingKey }, user-1] }] }",
    "flags:",
  ];
  for (let i = 0; i < count; i++) {
    out.push(
      `  flag-${i}:`,
      "    variants: { on: true, off: false }",
      `    defaultVariant: ${i === edits.broken ? "nope" : (edits.defaultVariant?.[i] ?? "off")}`,
    );
    if (i % 4 === 1) out.push('    targeting: { if: [{ $ref: beta }, "on", "off"] }');
    if (i % 4 === 2) out.push('    targeting: { if: [{ $ref: internal }, "on", null] }');
    if (i % 4 === 3) out.push('    targeting: { fractional: [["on", 50], ["off", 50]] }');
  }
  return `${out.join("\n")}\n`;
}

let dir: TempDir;
let memo: LoadMemo;

beforeEach(async () => {
  dir = await tempDir("flagserve-incremental-");
  memo = new LoadMemo();
});

describe("a load with the memo of the last", () => {
  it("parses, validates and compiles everything the first time", async () => {
    for (const env of ["a", "b", "c"]) await dir.write(`${env}.yaml`, envFile(env, 40));
    const load = await loadConfig(dir.path, { memo });
    expect([...load.environments.keys()]).toEqual(["a", "b", "c"]);
    expect(memo.last).toEqual({
      filesParsed: 3,
      charsParsed: 3 * envFile("a", 40).length,
      flagsValidated: 120,
      environmentsBuilt: 3,
      flagsCompiled: 120,
    });
  });

  it("after an edit of one flag in one of many files: parses that file, validates and compiles that flag, reuses the rest by reference", async () => {
    for (const env of ["a", "b", "c", "d"]) await dir.write(`${env}.yaml`, envFile(env, 40));
    const first = await loadConfig(dir.path, { memo });
    const edited = envFile("c", 40, { defaultVariant: { 7: "on" } });
    await dir.write("c.yaml", edited);
    const second = await loadConfig(dir.path, { memo });
    expect(memo.last).toEqual({ filesParsed: 1, charsParsed: edited.length, flagsValidated: 1, environmentsBuilt: 1, flagsCompiled: 1 });
    for (const env of ["a", "b", "d"]) expect(second.environments.get(env)).toEqual(first.environments.get(env));
    for (const env of ["a", "b", "d"]) expect(second.environments.get(env)!.config).toBe(first.environments.get(env)!.config);
    const [before, after] = [first, second].map((load) => load.environments.get("c")!);
    expect(after!.config.flags["flag-7"]!.defaultVariant).toBe("on");
    // The other flags of the edited file: the same definitions and compiled flags as before.
    expect(after!.config.flags["flag-6"]).toBe(before!.config.flags["flag-6"]);
    expect(after!.flags.get("flag-6")).toBe(before!.flags.get("flag-6"));
    expect(after!.flags.get("flag-7")).not.toBe(before!.flags.get("flag-7"));
  });

  it("with nothing changed: parses, validates and compiles nothing", async () => {
    await dir.write("a.yaml", envFile("a", 40));
    await loadConfig(dir.path, { memo });
    await loadConfig(dir.path, { memo });
    expect(memo.last).toEqual({ filesParsed: 0, charsParsed: 0, flagsValidated: 0, environmentsBuilt: 0, flagsCompiled: 0 });
  });

  it("after an edit of a segment: compiles the flags that use it, through other segments too, and no other", async () => {
    await dir.write("a.yaml", envFile("a", 40));
    const first = await loadConfig(dir.path, { memo });
    const edited = envFile("a", 40, { beta: "@corp.test" });
    await dir.write("a.yaml", edited);
    const second = await loadConfig(dir.path, { memo });
    // Flags 1, 5, 9... use beta; 2, 6, 10... use internal, which uses beta: 20 of 40.
    expect(memo.last).toEqual({ filesParsed: 1, charsParsed: edited.length, flagsValidated: 0, environmentsBuilt: 1, flagsCompiled: 20 });
    const [before, after] = [first, second].map((load) => load.environments.get("a")!);
    expect(after!.flags.get("flag-3")).toBe(before!.flags.get("flag-3"));
    expect(after!.flags.get("flag-1")).not.toBe(before!.flags.get("flag-1"));
    // The recompiled flags use the new segment, the kept ones still answer as before.
    const context = { targetingKey: "user-1", email: "x@corp.test" };
    expect(after!.flags.get("flag-1")!.rule!(context)).toBe("on");
    expect(after!.flags.get("flag-2")!.rule!(context)).toBe("on");
    expect(before!.flags.get("flag-1")!.rule!(context)).toBe("off");
  });

  it("reports a broken flag again on every load (it is never taken as known valid)", async () => {
    await dir.write("a.yaml", envFile("a", 20, { broken: 4 }));
    const first = await loadConfig(dir.path, { memo });
    await dir.write("a.yaml", envFile("a", 20, { broken: 4, defaultVariant: { 9: "on" } }));
    const second = await loadConfig(dir.path, { memo });
    for (const load of [first, second]) {
      expect(load.problems.get("a")?.map((p) => p.message)).toEqual(["defaultVariant 'nope' is not one of the variants ('on', 'off')"]);
      expect(load.environments.get("a")!.config.invalidFlags).toEqual({ "flag-4": expect.stringContaining("nope") });
    }
    // The broken flag and the edited one.
    expect(memo.last.flagsValidated).toBe(2);
    expect(memo.last.flagsCompiled).toBe(1);
  });

  it("with a flag whose targeting cannot compile: compiles that flag and the edited one, not the others", async () => {
    const withBadRule = (variant: string) =>
      envFile("a", 40, { defaultVariant: { 9: variant } }).replace(
        "flags:\n",
        "flags:\n  bad:\n    variants: { on: true }\n    defaultVariant: on\n    targeting: { nope: [1] }\n",
      );
    await dir.write("a.yaml", withBadRule("off"));
    await loadConfig(dir.path, { memo });
    await dir.write("a.yaml", withBadRule("on"));
    const load = await loadConfig(dir.path, { memo });
    expect(load.problems.get("a")?.map((p) => p.message)).toEqual([expect.stringContaining("nope")]);
    expect(memo.last.flagsCompiled).toBe(2);
  });

  it("reads inline environments the same way", async () => {
    const config = {
      apiKey: "inline-key-0123456789",
      flags: { f: { variants: { on: true }, defaultVariant: "on" }, g: { variants: { on: true }, defaultVariant: "on" } },
    };
    await loadInlineConfig({ dev: config }, { memo });
    const edited = { ...config, flags: { ...config.flags, g: { variants: { on: true, off: false }, defaultVariant: "off" } } };
    await loadInlineConfig({ dev: edited }, { memo });
    // Values are read as their JSON text (a private copy).
    expect(memo.last).toEqual({
      filesParsed: 1,
      charsParsed: JSON.stringify(edited).length,
      flagsValidated: 1,
      environmentsBuilt: 1,
      flagsCompiled: 1,
    });
  });
});

describe("a load of files read before they settled (a running server's reload)", () => {
  it("builds nothing when one changed meanwhile: a half-written file is never checked nor reported", async () => {
    const whole = envFile("a", 4);
    // Cut in the middle of flag 2's `defaultVariant: off`.
    const half = `${whole.slice(0, whole.indexOf("defaultVariant", whole.indexOf("flag-2")) + "defaultVariant: o".length)}\n`;
    const path = await dir.write("a.yaml", half);
    // Its mtime ahead of our clock: however long this machine takes to reach the read, the file
    // has not settled by then (the window counts from when the read first sees it).
    utimesSync(path, new Date(), new Date(Date.now() + 60_000));
    const inputs = new InputSet(true);
    const read = await readStableFile(path, { inputs }); // taken at once, to be parsed while it settles
    if (!("bytes" in read)) throw new Error(read.error);
    await dir.write("a.yaml", whole); // the writer goes on within the settle window
    const documents = [{ stem: "a", document: { file: path, ...read } }];
    const load = await loadSourceReads([{ id: dir.path, documents, environments: [], problems: [] }], { inputs, memo });
    expect(load).toEqual({ environments: new Map(), problems: new Map(), unsettled: true });
    expect(memo.last.environmentsBuilt).toBe(0);
    // The same bytes, once they have stayed as read, are built (and their problem reported).
    const settled = new InputSet(true);
    await dir.write("a.yaml", half);
    const again = await readStableFile(path, { inputs: settled });
    if (!("bytes" in again)) throw new Error(again.error);
    const built = await loadSourceReads(
      [{ id: dir.path, documents: [{ stem: "a", document: { file: path, ...again } }], environments: [], problems: [] }],
      { inputs: settled, memo },
    );
    expect(built.unsettled).toBeUndefined();
    expect(built.problems.get("a")?.map((p) => p.message)).toEqual(["defaultVariant 'o' is not one of the variants ('on', 'off')"]);
  });

  it("answers as soon as a file read empty is written, not once its empty-file window has passed", async () => {
    const path = await dir.write("a.yaml", ""); // truncated by a writer that has not written yet
    const inputs = new InputSet(true);
    const read = await readStableFile(path, { inputs });
    if (!("bytes" in read)) throw new Error(read.error);
    expect(read.bytes.length).toBe(0);
    const started = Date.now();
    const settled = inputs.settled();
    await dir.write("a.yaml", envFile("a", 4));
    expect(await settled).toBe(false);
    // Well within the window (EMPTY_SETTLE_MS): the reload reads the written file at once.
    expect(Date.now() - started).toBeLessThan(EMPTY_SETTLE_MS);
  });
});

describe("a reload with the memo", () => {
  let ctx: ReloadContext;

  beforeEach(() => {
    ctx = reloadContext(dir.file("state"));
  });

  afterEach(() => ctx.hub.close());

  const reload = async (source: FileSource) => applyLoad(await loadSources([source], { memo }), ctx);

  it("announces exactly the net change, keeps the untouched environments' snapshots, and keeps a broken flag's last good definition", async () => {
    for (const env of ["a", "b"]) await dir.write(`${env}.yaml`, envFile(env, 200));
    // Timestamps prove these files unchanged at once (by default only once their last change is 2 s old).
    const source = new FileSource(dir.path, { racyMs: 0 });
    await reload(source);
    expect(source.texts.reads).toBe(2);
    const [a, b] = [ctx.store.get("a"), ctx.store.get("b")];

    // One flag edited, one broken, in the big file b.
    const edited = envFile("b", 200, { defaultVariant: { 10: "on" }, broken: 11 });
    await dir.write("b.yaml", edited);
    const changes = await reload(source);
    expect(changes.map((c) => [c.env, c.changes.map((x) => `${x.kind} ${"key" in x ? x.key : ""} ${x.change}`)])).toEqual([
      ["b", ["flag flag-10 updated"]],
    ]);
    expect(ctx.store.get("a")).toBe(a);
    const after = ctx.store.get("b")!;
    expect(after).not.toBe(b);
    expect(after.config.flags["flag-11"]).toEqual(b!.config.flags["flag-11"]); // its last good definition
    expect(after.flags.get("flag-11")).toBe(b!.flags.get("flag-11"));
    expect(memo.last).toEqual({ filesParsed: 1, charsParsed: edited.length, flagsValidated: 2, environmentsBuilt: 1, flagsCompiled: 1 });
    expect(source.texts.reads).toBe(3); // b.yaml alone read again

    // Fixed again: the flag's definition as written comes back, announced as no change (it is the last good one).
    await dir.write("b.yaml", envFile("b", 200, { defaultVariant: { 10: "on" } }));
    expect(await reload(source)).toEqual([]);
    expect(ctx.store.get("b")!.config.invalidFlags).toBeUndefined();
  });

  it("an edit of one flag in a big file compiles that flag alone, and makes the snapshot a full load gives", async () => {
    await dir.write("big.yaml", envFile("big", 300));
    const source = new FileSource(dir.path, { racyMs: 0 });
    await reload(source);
    const before = ctx.store.get("big")!;
    void before.configEtag;
    await dir.write("big.yaml", envFile("big", 300, { defaultVariant: { 42: "on" } }));
    const changes = await reload(source);
    expect(changes.flatMap((c) => c.changes.map((x) => ("key" in x ? `${x.key} ${x.change}` : x.kind)))).toEqual(["flag-42 updated"]);
    const after = ctx.store.get("big")!;
    expect(memo.last.flagsCompiled).toBe(1);
    expect(after.config.flags["flag-41"]).toBe(before.config.flags["flag-41"]);
    // And what they made is what a load from nothing makes.
    const fresh = (await loadConfig(dir.path)).environments.get("big")!;
    expect(after.config).toEqual(fresh.config);
    expect([...after.flags.keys()]).toEqual([...fresh.flags.keys()]);
    expect(after.configEtag).toBe(configEtagOf(fresh.config));
    expect(after.configEtag).not.toBe(before.configEtag);
  });

  // More seeds: INCREMENTAL_SEEDS=20 npx vitest run test/changes/incremental.test.ts
  const seeds = Array.from({ length: Number(process.env.INCREMENTAL_SEEDS ?? 1) }, (_, i) => 29 + i);
  it.each(seeds)(
    "random edits of a file, one after another, load as a load from nothing does, with the served ETag made from scratch (seed %i)",
    async (seed) => {
      const source = new FileSource(dir.path, { racyMs: 0 });
      for (const { text, step: context } of randomEdits(seed, 40)) {
        await dir.write("random.yaml", text);
        const load = await loadSources([source], { memo });
        const fresh = await loadConfig(dir.path);
        expect(load.problems, context).toEqual(fresh.problems);
        const [loaded, expected] = [load.environments.get("random")!, fresh.environments.get("random")!];
        expect(loaded.config, context).toEqual(expected.config);
        expect([...loaded.flags.keys()], context).toEqual([...expected.flags.keys()]);
        for (const [flagKey, compiled] of loaded.flags) {
          for (const email of ["ada@example.com", "bob@example.org"]) {
            const evaluation = { targetingKey: "user-1", email, $flagd: { flagKey, timestamp: 0 } };
            const answer = (f: typeof compiled) => {
              try {
                return f.rule ? f.rule(evaluation) : f.defaultVariant;
              } catch (error) {
                return (error as Error).message;
              }
            };
            expect(answer(compiled), `${context}: ${flagKey} for ${email}`).toEqual(answer(expected.flags.get(flagKey)!));
          }
        }
        await applyLoad(load, ctx);
        const served = ctx.store.get("random")!;
        expect(served.configEtag, context).toBe(configEtagOf(structuredClone(served.config)));
      }
    },
  );
});
