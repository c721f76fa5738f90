import { describe, expect, it } from "vitest";
import { editOf, recordEdit } from "../../src/model/edits.js";

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
});
