/** Values derived from a flag's outcomes: shared outcomes by identity, errors by code and details. */
import { describe, expect, it } from "vitest";
import type { Evaluation } from "../../src/engine/types.js";
import { OutcomeMemo, OutcomeTable } from "../../src/answers/outcome-memo.js";

const success = (variant: string): Evaluation =>
  Object.freeze({ key: "f", reason: "TARGETING_MATCH", variant, value: variant, metadata: {} });
const error = (errorDetails: string): Evaluation => ({ key: "f", errorCode: "PARSE_ERROR", errorDetails, metadata: {} });

describe("OutcomeMemo", () => {
  it("remembers a shared outcome by identity, not by its fields", () => {
    const memo = new OutcomeMemo<string>();
    const on = success("on");
    memo.remember(on, "on's value");
    expect(memo.get(on)).toBe("on's value");
    expect(memo.get(success("on"))).toBeUndefined();
  });

  it("remembers an error by its code and details, each error being a new object", () => {
    const memo = new OutcomeMemo<string>();
    memo.remember(error('bad version "x"'), "x's value");
    expect(memo.get(error('bad version "x"'))).toBe("x's value");
    expect(memo.get(error('bad version "y"'))).toBeUndefined();
    expect(memo.get({ key: "f", errorCode: "GENERAL", errorDetails: 'bad version "x"', metadata: {} })).toBeUndefined();
  });

  it("does not remember an outcome that is neither shared nor an error", () => {
    const memo = new OutcomeMemo<string>();
    const unshared: Evaluation = { key: "f", reason: "DEFAULT", metadata: {} };
    memo.remember(unshared, "value");
    expect(memo.get(unshared)).toBeUndefined();
  });

  it("remembers up to MAX_REMEMBERED of each kind", () => {
    const memo = new OutcomeMemo<number>();
    const max = OutcomeMemo.MAX_REMEMBERED;
    const successes = Array.from({ length: max + 1 }, (_, i) => success(`v${i}`));
    successes.forEach((outcome, i) => memo.remember(outcome, i));
    for (let i = 0; i <= max; i++) memo.remember(error(`e${i}`), 100 + i);
    expect(memo.get(successes[max - 1]!)).toBe(max - 1);
    expect(memo.get(successes[max]!)).toBeUndefined();
    expect(memo.get(error(`e${max - 1}`))).toBe(100 + max - 1);
    expect(memo.get(error(`e${max}`))).toBeUndefined();
  });
});

describe("OutcomeTable", () => {
  it("keeps each flag's outcomes apart", () => {
    const table = new OutcomeTable<string>(3);
    const on = success("on");
    table.remember(1, on, "flag 1's value");
    expect(table.get(1, on)).toBe("flag 1's value");
    expect(table.get(0, on)).toBeUndefined();
    expect(table.get(2, on)).toBeUndefined();
    table.remember(2, on, "flag 2's value");
    expect(table.get(1, on)).toBe("flag 1's value");
    expect(table.get(2, on)).toBe("flag 2's value");
  });

  it("finds a flag's outcomes, and its errors, as OutcomeMemo does", () => {
    const table = new OutcomeTable<number>(2);
    const many = 7;
    const successes = Array.from({ length: many }, (_, i) => success(`v${i}`));
    table.remember(0, error('bad version "x"'), -1);
    successes.forEach((outcome, i) => table.remember(0, outcome, i));
    successes.forEach((outcome, i) => expect(table.get(0, outcome)).toBe(i));
    expect(table.get(0, error('bad version "x"'))).toBe(-1);
    expect(table.get(0, error('bad version "y"'))).toBeUndefined();
    expect(table.get(1, successes[0]!)).toBeUndefined();
    expect(table.get(1, error('bad version "x"'))).toBeUndefined();
  });

  it("does not remember an outcome that is neither shared nor an error", () => {
    const table = new OutcomeTable<string>(1);
    const unshared: Evaluation = { key: "f", reason: "DEFAULT", metadata: {} };
    table.remember(0, unshared, "value");
    expect(table.get(0, unshared)).toBeUndefined();
  });
});
