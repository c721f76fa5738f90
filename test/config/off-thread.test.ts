/**
 * Files read while serving are parsed in a worker thread (LoadOptions.offThread); at start-up
 * and for `validate` on this thread. Both must give the same environments and the same
 * problems at the same line:col. The worker runs from the build (dist/), as the CLI does.
 */
import { describe, expect, it } from "vitest";
import type * as Config from "../../src/config/index.js";
import { lines, problemLines, useTempDir } from "./helpers.js";
import { randomEdits } from "../helpers/random-edits.js";

const { loadConfig, LoadMemo } = (await import(new URL("../../dist/config/index.js", import.meta.url).href)) as typeof Config;

/**
 * About 650 KiB: a big file, whose parse would hold a thread up for long. Few flags with a
 * long note each, so that the size is reached with few YAML nodes (parsing costs per node).
 */
const FLAGS = 800;
const NOTE = "x".repeat(700);
function bigFile(flags: number, extra: (i: number) => string = () => ""): string {
  const out = ["flags:"];
  for (let i = 0; i < flags; i++) {
    out.push(
      `  flag-${i}:`,
      "    variants: { on: true, off: false }",
      "    defaultVariant: 'off'",
      `    metadata: { owner: team-${i % 10}, note: ${NOTE} }${extra(i)}`,
    );
  }
  return `${out.join("\n")}\n`;
}

describe("big files, on and off the thread", { timeout: 60_000 }, () => {
  const tmp = useTempDir();

  const bothWays = async (text: string) => {
    const file = await tmp.write("dev.yaml", text);
    const [here, worker] = [await loadConfig(file), await loadConfig(file, { offThread: true })];
    return { here, worker };
  };

  it("a valid file loads the same", async () => {
    const { here, worker } = await bothWays(bigFile(FLAGS));
    expect(here.problems.size).toBe(0);
    expect(worker.problems.size).toBe(0);
    expect(worker.environments.get("dev")!.flags.size).toBe(FLAGS);
    expect(worker.environments.get("dev")!.config).toEqual(here.environments.get("dev")!.config);
  });

  it("a schema problem is located the same (positions found on demand)", async () => {
    const { here, worker } = await bothWays(bigFile(FLAGS, (i) => (i === 432 ? "\n    state: MAYBE" : "")));
    const lines = problemLines(here, tmp.path);
    expect(lines).toEqual([expect.stringMatching(/^<dir>\/dev\.yaml:1734:12 flags\.flag-432\.state: /)]);
    expect(problemLines(worker, tmp.path)).toEqual(lines);
  });

  it("a duplicate key is located the same", async () => {
    const { here, worker } = await bothWays(`${bigFile(FLAGS)}  flag-17:\n    variants: { on: true }\n`);
    const lines = problemLines(here, tmp.path);
    expect(lines).toEqual(["<dir>/dev.yaml:3202:3 duplicate key 'flag-17'"]);
    expect(problemLines(worker, tmp.path)).toEqual(lines);
  });

  it.each([
    [".inf", ".inf"],
    ["-.inf", "-.Inf"],
    [".nan", ".NaN"],
    ["a tagged float", "!!float .inf"],
    ["an integer past 1e308", `1${"0".repeat(309)}`],
    ["a hexadecimal integer past 1e308", `0x${"f".repeat(300)}`],
  ])("a value JSON cannot carry (%s) is reported as on this thread", async (_, number) => {
    const { here, worker } = await bothWays(
      bigFile(FLAGS, (i) => (i === 77 ? `\n    variants: { a: ${number}, b: .nan }` : "")).replace(
        "  flag-77:\n    variants: { on: true, off: false }\n",
        "  flag-77:\n",
      ),
    );
    const lines = problemLines(here, tmp.path);
    expect(lines).toEqual([
      expect.stringMatching(/defaultVariant 'off' is not one of the variants/),
      expect.stringMatching(/flags\.flag-77\.variants\.a: must be a finite number/),
      expect.stringMatching(/flags\.flag-77\.variants\.b: must be a finite number/),
    ]);
    expect(problemLines(worker, tmp.path)).toEqual(lines);
  });

  it("a file with an alias loads the same", async () => {
    const text = bigFile(FLAGS)
      .replace("variants: { on: true, off: false }", "variants: &onoff { on: true, off: false }")
      .replace("  flag-1:\n    variants: { on: true, off: false }", "  flag-1:\n    variants: *onoff");
    expect(text).toContain("variants: *onoff");
    const { here, worker } = await bothWays(text);
    expect(here.problems.size).toBe(0);
    expect(worker.problems.size).toBe(0);
    expect(worker.environments.get("dev")!.config.flags["flag-1"]).toEqual(here.environments.get("dev")!.config.flags["flag-1"]);
  });

  it("an edit parsed in the worker loads as a fresh parse does, the flags it left alone the objects of the last load", async () => {
    const memo = new LoadMemo();
    const file = await tmp.write("dev.yaml", bigFile(5000));
    const first = await loadConfig(file, { memo });
    const variantAdded = bigFile(5000).replace(
      "  flag-77:\n    variants: { on: true, off: false }",
      "  flag-77:\n    variants: { on: true, off: false, maybe: true }",
    );
    const edits = [
      variantAdded,
      // The last flag replaced by another.
      `${variantAdded.slice(0, variantAdded.indexOf("  flag-4999:"))}  added:\n    variants: { on: true }\n    defaultVariant: on\n`,
      `apiKey: worker-key-0123456789\n${bigFile(5000)}`,
    ];
    let last = first.environments.get("dev")!;
    for (const text of edits) {
      await tmp.write("dev.yaml", text);
      const [edited, fresh] = [await loadConfig(file, { offThread: true, memo }), await loadConfig(file)];
      expect(edited.problems).toEqual(fresh.problems);
      const env = edited.environments.get("dev")!;
      expect(env.config).toEqual(fresh.environments.get("dev")!.config);
      expect(Object.keys(env.config.flags)).toEqual(Object.keys(fresh.environments.get("dev")!.config.flags));
      expect(env.config.flags["flag-3"]).toBe(last.config.flags["flag-3"]);
      expect(env.flags.get("flag-3")).toBe(last.flags.get("flag-3"));
      expect(memo.last.flagsCompiled).toBeLessThanOrEqual(2);
      last = env;
    }
  });

  it("bytes that are not UTF-8 are reported through the worker as on this thread", async () => {
    // Flag 7's owner `team-7` with the 7 written as the byte 0xff.
    const bad = Buffer.from(bigFile(FLAGS));
    bad[bad.indexOf("owner: team-7,") + "owner: team-".length] = 0xff;
    const file = await tmp.write("dev.yaml", bad);
    const [broken, fresh] = [await loadConfig(file, { offThread: true }), await loadConfig(file)];
    const lines = problemLines(fresh, tmp.path);
    expect(lines).toEqual([expect.stringMatching(/^<dir>\/dev\.yaml:\d+:\d+ not valid UTF-8: byte 0xff/)]);
    expect(problemLines(broken, tmp.path)).toEqual(lines);
  });

  it("random edits read by the worker load as a fresh parse here does", async () => {
    const memo = new LoadMemo();
    let first = true;
    for (const { text, step } of randomEdits(7, 30)) {
      const file = await tmp.write("random.yaml", text);
      // The first text at start-up (on this thread), the edits as a server reads them (in the worker).
      const [edited, fresh] = [await loadConfig(file, { offThread: !first, memo }), await loadConfig(file)];
      first = false;
      expect(problemLines(edited, tmp.path), step).toEqual(problemLines(fresh, tmp.path));
      const [loaded, expected] = [edited.environments.get("random")!, fresh.environments.get("random")!];
      expect(loaded.config, step).toEqual(expected.config);
      expect([...loaded.flags.keys()], step).toEqual([...expected.flags.keys()]);
    }
  });

  it("problems found after the parse are placed by the worker as on this thread: a directory's files, and an environments: file", async () => {
    await tmp.write(
      "conf/a.yaml",
      lines("apiKey: shared-key-0123456789", "flags:", "  f: { variants: { on: true }, defaultVariant: nope }"),
    );
    await tmp.write("conf/b.yaml", lines("apiKey: shared-key-0123456789", "flags:", "  g: { variants: { on: true }, state: MAYBE }"));
    await tmp.write("conf/team/one.yaml", lines("flags:", "  h: { variants: { on: true } }"));
    await tmp.write("conf/team/two.yaml", lines("segments: {}", "flags:", "  h: { variants: { off: false } }"));
    const multi = await tmp.write("multi.yaml", lines("extra: 1", "environments:", "  x:", "    flags:", "      k: { variants: {} }"));
    for (const path of [`${tmp.path}/conf`, multi]) {
      const [worker, here] = [await loadConfig(path, { offThread: true, memo: new LoadMemo() }), await loadConfig(path)];
      const placed = problemLines(here, tmp.path);
      expect(placed.length).toBeGreaterThanOrEqual(path === multi ? 2 : 5);
      expect(placed.filter((line) => /:0:0 /.test(line))).toEqual([]);
      expect(problemLines(worker, tmp.path)).toEqual(placed);
    }
  });

  it("a file left broken keeps its problems' places (found once, by the worker) while another file of its environment is edited", async () => {
    const memo = new LoadMemo();
    const dir = `${tmp.path}/conf`;
    await tmp.write("conf/dev/a.yaml", lines("flags:", "  f: { variants: { on: true }, defaultVariant: nope }"));
    await tmp.write("conf/dev/b.yaml", lines("flags:", "  g: { variants: { on: true } }"));
    await loadConfig(dir, { memo });
    // Read again while serving: its problems are now placed by the worker.
    const broken = ["  f: { variants: { on: true, off: false }, defaultVariant: nope }", "  h: { variants: { on: true }, state: MAYBE }"];
    await tmp.write("conf/dev/a.yaml", lines("flags:", ...broken));
    const edited = await loadConfig(dir, { memo, offThread: true });
    await tmp.write("conf/dev/b.yaml", lines("flags:", "  g: { variants: { off: false } }"));
    const sibling = await loadConfig(dir, { memo, offThread: true });
    const fresh = problemLines(await loadConfig(dir), tmp.path);
    expect(fresh).toEqual([
      expect.stringMatching(/^<dir>\/conf\/dev\/a\.yaml:2:\d+ .*defaultVariant 'nope'/),
      expect.stringMatching(/^<dir>\/conf\/dev\/a\.yaml:3:\d+ flags\.h\.state: /),
    ]);
    expect(problemLines(edited, tmp.path)).toEqual(fresh);
    expect(problemLines(sibling, tmp.path)).toEqual(fresh);
  });

  it("an edit of a big file that nests too deep is refused through the worker as on this thread, at its line:col", async () => {
    const memo = new LoadMemo();
    const file = await tmp.write("dev.yaml", bigFile(FLAGS));
    await loadConfig(file, { memo });
    const text = bigFile(FLAGS).replace("  flag-7:\n", `  flag-7:\n    note: ${"[".repeat(5000)}${"]".repeat(5000)}\n`);
    await tmp.write("dev.yaml", text);
    const [edited, fresh] = [await loadConfig(file, { offThread: true, memo }), await loadConfig(file)];
    const lines = problemLines(fresh, tmp.path);
    expect(lines).toEqual([
      "<dir>/dev.yaml:31:136 the document is nested deeper than 128 levels of mappings and lists; no flag configuration needs that",
    ]);
    expect(problemLines(edited, tmp.path)).toEqual(lines);
    expect(edited.environments.has("dev")).toBe(false);
  });
});
