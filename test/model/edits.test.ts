import { describe, expect, it } from "vitest";
import { editOf, keysOf, recordEdit } from "../../src/model/edits.js";

describe("edit records", () => {
  it("name the mapping an edit was made from and the keys it replaced", () => {
    const first = { a: 1, b: 2 };
    const second = { a: 1, b: 3 };
    recordEdit(second, first, ["b"]);
    expect(editOf(second)).toEqual({ from: first, changed: ["b"] });
    expect(editOf(first)).toBeUndefined();
    expect(editOf(undefined)).toBeUndefined();
    expect(editOf("text")).toBeUndefined();
  });

  it("look one edit back: a new record drops the one of the mapping it was made from", () => {
    // Else each record would keep the version before alive, and so every version of a big map.
    const first = { a: 1 };
    const second = { a: 2 };
    const third = { a: 3 };
    recordEdit(second, first, ["a"]);
    recordEdit(third, second, ["a"]);
    expect(editOf(third)).toEqual({ from: second, changed: ["a"] });
    expect(editOf(second)).toBeUndefined();
  });

  it("list a mapping's keys once for a chain of edits: an edit has the keys of the mapping it was made from", () => {
    let listings = 0;
    const counted = <T extends object>(mapping: T): T => new Proxy(mapping, { ownKeys: (target) => (listings++, Reflect.ownKeys(target)) });
    const first = counted({ a: 1, b: 2 });
    expect(keysOf(first)).toEqual(["a", "b"]);
    expect(keysOf(first)).toBe(keysOf(first));
    const second = counted({ a: 1, b: 3 });
    recordEdit(second, first, ["b"]);
    const third = counted({ a: 1, b: 4 });
    recordEdit(third, second, ["b"]);
    expect(keysOf(third)).toBe(keysOf(first));
    expect(listings).toBe(1);
    // Without a record, a mapping's keys are its own.
    expect(keysOf(counted({ c: 1 }))).toEqual(["c"]);
    expect(listings).toBe(2);
  });
});
