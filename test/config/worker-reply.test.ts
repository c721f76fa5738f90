/**
 * What the parse worker sends back (memo.ts's leaveOutUnchanged) and how the serving thread reads
 * it (withUnchanged): the changed flags only, each as JSON text, read a few hundred at a time.
 */
import { describe, expect, it, vi } from "vitest";
import { leaveOutUnchanged, shareUnchanged, withUnchanged, type Encoded } from "../../src/config/share.js";
import { editOf, recordEdit } from "../../src/model/edits.js";
import { ITEMS_PER_YIELD, runSteps, type Steps } from "../../src/model/steps.js";

const flag = (i: number, extra: Record<string, unknown> = {}) => ({
  variants: { on: true, off: false },
  defaultVariant: i % 2 ? "on" : "off",
  ...extra,
});
function file(count: number, edit: (flags: Record<string, unknown>) => void = () => {}) {
  const flags: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) flags[`flag-${i}`] = flag(i);
  edit(flags);
  return { apiKey: "k", flags };
}

/** The steps' value and how many times they yielded. */
function run<T>(steps: Steps<T>): { value: T; yields: number } {
  let yields = 0;
  let next = steps.next();
  while (!next.done) {
    yields++;
    next = steps.next();
  }
  return { value: next.value, yields };
}

/** The JSON texts in a reply: each is one part parsed on the serving thread. */
function texts(encoded: Encoded | undefined): string[] {
  if (encoded === undefined) return [];
  if (typeof encoded === "string") return [encoded];
  if ("v" in encoded) return [];
  return Object.values(encoded.r).flatMap(texts);
}

describe("the parse worker's reply", () => {
  it("from the value the server holds: the changed part alone, as text; the rest shared", () => {
    const last = file(2000);
    const next = file(2000, (flags) => (flags["flag-7"] = flag(7, { state: "DISABLED" })));
    const reply = leaveOutUnchanged(last, next) as { r: Record<string, Encoded>; k?: string[] };
    // Mapping by mapping down to a flag's parts (the depth shareUnchanged shares).
    expect(texts(reply)).toEqual(['"DISABLED"']);
    expect(reply.k).toBeUndefined(); // same keys, in the same order: not sent
    expect((reply.r.flags as { k?: string[] }).k).toBeUndefined();
    const { value, yields } = run(withUnchanged(last, reply));
    expect(value).toEqual(next);
    const flags = (value as typeof next).flags;
    expect(flags["flag-8"]).toBe(last.flags["flag-8"]);
    expect(flags["flag-7"]).not.toBe(last.flags["flag-7"]);
    // 2 000 flags, a yield every ITEMS_PER_YIELD.
    expect(yields).toBe(Math.floor(2000 / ITEMS_PER_YIELD));
    expect(leaveOutUnchanged(last, file(2000))).toBeUndefined();
    expect(runSteps(withUnchanged(last, undefined))).toBe(last);
    // Which entries were replaced is recorded, mapping by mapping, for the later stages (model/edits.ts).
    expect(editOf(flags)).toEqual({ from: last.flags, changed: ["flag-7"] });
    expect(editOf(value)).toEqual({ from: last, changed: ["flags"] });
  });

  it("of an edit its maker recorded (reparse.ts): only the entries it replaced are compared", () => {
    const last = file(2000);
    const flags: Record<string, unknown> = { ...last.flags, "flag-7": flag(7, { state: "DISABLED" }) };
    const next = { ...last, flags };
    // Every entry the edit did not replace counts its reads: comparing it would read it.
    let reads = 0;
    for (const key of Object.keys(flags).filter((key) => key !== "flag-7")) {
      const value = flags[key];
      Object.defineProperty(flags, key, { enumerable: true, get: () => (reads++, value) });
    }
    recordEdit(flags, last.flags, ["flag-7"]);
    recordEdit(next, last, ["flags"]);
    const reply = leaveOutUnchanged(last, next);
    expect(reads).toBe(0);
    expect(reply).toEqual(
      leaveOutUnchanged(
        last,
        file(2000, (all) => (all["flag-7"] = flag(7, { state: "DISABLED" }))),
      ),
    );
    expect(texts(reply)).toEqual(['"DISABLED"']);
    // Recorded but nothing different after all: nothing sent.
    const same = { ...last };
    recordEdit(same, last, ["apiKey"]);
    expect(leaveOutUnchanged(last, same)).toBeUndefined();
    // A record made from another value is not this edit's: compared entry by entry.
    recordEdit(next, file(2000), ["flags"]);
    expect(leaveOutUnchanged(last, next)).toEqual(reply);
    expect(reads).toBeGreaterThan(0);
  });

  it("read back edit after edit, lists the keys of a 2 000-flag mapping once: each value has its last one's keys", () => {
    const versions = [7, 8, 9].reduce(
      (all, i) => [...all, file(2000, (flags) => (flags[`flag-${i}`] = flag(i, { state: "DISABLED" })))],
      [file(2000)],
    );
    const replies = versions.slice(1).map((next, i) => leaveOutUnchanged(versions[i], next));
    const keys = vi.spyOn(Object, "keys");
    try {
      let served: unknown = versions[0];
      for (const reply of replies) served = runSteps(withUnchanged(served, reply));
      expect(served).toEqual(versions.at(-1));
      expect(keys.mock.results.filter(({ value }) => (value as string[]).length === 2000)).toHaveLength(1);
    } finally {
      keys.mockRestore();
    }
  });

  it("keys added, removed or moved: the key list comes too", () => {
    const last = file(5);
    const next = file(5, (flags) => {
      delete flags["flag-2"];
      flags.added = flag(9);
    });
    const reply = leaveOutUnchanged(last, next) as { r: Record<string, Encoded>; k?: string[] };
    expect(reply.k).toBeUndefined(); // the root's keys are the same...
    const flags = reply.r.flags as { r: Record<string, Encoded>; k?: string[] };
    expect(flags.k).toEqual(["flag-0", "flag-1", "flag-3", "flag-4", "added"]);
    expect(Object.keys(flags.r)).toEqual(["added"]);
    const value = runSteps(withUnchanged(last, reply)) as typeof next;
    expect(value).toEqual(next);
    expect(Object.keys(value.flags)).toEqual(Object.keys(next.flags));
    // Other keys: no record, the later stages walk the mapping whole.
    expect(editOf(value.flags)).toBeUndefined();
    expect(editOf(value)).toEqual({ from: last, changed: ["flags"] });
  });

  it("without the server's value: one text per flag; values JSON cannot carry as they are", () => {
    const next = file(100, (flags) => (flags["flag-1"] = flag(1, { variants: { big: Infinity, none: Number.NaN, zero: -0 } })));
    const reply = leaveOutUnchanged(undefined, next, 0, false) as { r: { flags: { r: Record<string, Encoded> } } };
    // The root and `flags:` (many entries) mapping by mapping; each flag whole, flag-1 as it is.
    expect(texts(reply)).toEqual([
      '"k"',
      ...Object.keys(next.flags)
        .filter((key) => key !== "flag-1")
        .map((key) => JSON.stringify(next.flags[key])),
    ]);
    expect(reply.r.flags.r["flag-1"]).toEqual({ v: next.flags["flag-1"] });
    const value = runSteps(withUnchanged(undefined, reply)) as typeof next;
    expect(value).toEqual(next);
    expect(Object.is((value.flags["flag-1"] as { variants: { zero: number } }).variants.zero, -0)).toBe(true);
    // A small file goes as one text.
    expect(leaveOutUnchanged(undefined, file(3), 0, false)).toBe(JSON.stringify(file(3)));
  });
});

describe("a new parse shared with the last (shareUnchanged)", () => {
  it("records which entries it replaced, when the keys are the same and in the same order", () => {
    const last = file(300);
    const value = runSteps(
      shareUnchanged(
        last,
        file(300, (flags) => (flags["flag-9"] = flag(9, { state: "DISABLED" }))),
      ),
    ) as typeof last;
    expect(value.flags["flag-8"]).toBe(last.flags["flag-8"]);
    expect(editOf(value.flags)).toEqual({ from: last.flags, changed: ["flag-9"] });
    expect(editOf(value)).toEqual({ from: last, changed: ["flags"] });
    const reordered = runSteps(shareUnchanged(last, { flags: last.flags, apiKey: "k" }));
    expect(editOf(reordered)).toBeUndefined();
    expect(runSteps(shareUnchanged(last, file(300)))).toBe(last);
  });
});
