import { describe, expect, it } from "vitest";
import { createLogicEngine } from "../../src/engine/logic.js";

/**
 * The operators' compile hooks specialise the usual forms when a rule is built; the engine's
 * interpreter (`run`) calls the plain methods. Both must give the same answer for every form.
 */
describe("compiled operator forms answer as the plain methods", () => {
  const engine = createLogicEngine();
  const values: unknown[] = [
    "2.1.0",
    "v3.0.1",
    "1.0.0-rc.1",
    "2.0.0.0",
    "",
    "abc",
    "pro-plus",
    "DE",
    "x.y",
    3,
    2.5,
    0,
    true,
    null,
    [1],
    { a: 1 },
  ];
  const contexts: Record<string, unknown>[] = [
    {},
    { nested: { deep: "DE" } },
    { nested: "flat" },
    { "x.y": "dotted" },
    { constructor: "own", 0: "zero", length: 2 },
    { items: [{ b: 2, 0: "zero" }, ["first"], "ab", 0, null, { b: 3 }] },
  ];
  for (const value of values) contexts.push({ value, nested: { deep: value } });

  const rules: Record<string, unknown> = {
    "var, one key": { var: "value" },
    "var, a path": { var: "nested.deep" },
    "var, a default": { var: ["value", "fallback"] },
    "var, a number default on a path": { var: ["nested.deep", 7] },
    "var, the whole data": { var: "" },
    "var, a key objects inherit": { var: "constructor" },
    "var, a key arrays inherit": { map: [{ var: "items" }, { var: ["map", "none"] }] },
    "var, an index": { var: 0 },
    "var, a key with quotes and a line separator": { var: 'a"b\u2028' },
    "var, on items of every JSON type": { map: [{ var: "items" }, { var: ["0", "none"] }] },
    "var, a key of the items": { map: [{ var: "items" }, { var: "b" }] },
    "var, a default of -0": { var: ["missing", -0] },
    "sem_ver, constant on the right": { sem_ver: [{ var: "value" }, ">=", "2.1.0"] },
    "sem_ver, constant on the left": { sem_ver: ["2.0.0", "<", { var: "value" }] },
    "sem_ver, ^ and ~": { and: [{ sem_ver: [{ var: "value" }, "^", "3.0.0"] }, { sem_ver: [{ var: "value" }, "~", "v3.0"] }] },
    "sem_ver, an invalid constant": { sem_ver: [{ var: "value" }, "=", "2.0.0.0"] },
    "sem_ver, a number constant": { sem_ver: [{ var: "value" }, ">", 2] },
    "sem_ver, an unknown operator": { sem_ver: [{ var: "value" }, "==", "1.0.0"] },
    "sem_ver, both operands read": { sem_ver: [{ var: "value" }, "=", { var: "nested.deep" }] },
    starts_with: { starts_with: [{ var: "value" }, "pro"] },
    ends_with: { ends_with: [{ var: "value" }, ".0"] },
    "starts_with, a non-string affix": { starts_with: [{ var: "value" }, 1] },
    "ends_with, three arguments": { ends_with: [{ var: "value" }, "c", "x"] },
    "in, a list of literals": { in: [{ var: "value" }, ["DE", 3, true, null]] },
    "in, a string": { in: [{ var: "value" }, "abcDE"] },
    "in, an empty list": { in: [{ var: "value" }, []] },
    "in, a list with an expression": { in: [{ var: "value" }, ["DE", { var: "nested.deep" }]] },
  };

  const outcome = (f: () => unknown): unknown => {
    try {
      return { value: f() };
    } catch (err) {
      return { threw: err instanceof Error ? err.constructor.name : typeof err };
    }
  };

  it.each(Object.entries(rules))("%s", (_name, rule) => {
    const compiled = engine.build(rule) as (data: unknown) => unknown;
    for (const context of contexts) {
      expect(
        outcome(() => compiled(context)),
        JSON.stringify(context),
      ).toEqual(outcome(() => engine.run(rule, context)));
    }
  });

  it("calls the specialised forms directly, keeping no state between evaluations", () => {
    const compiled = engine.build({ sem_ver: [{ var: "value" }, ">=", "2.1.0"] }) as (data: unknown) => unknown;
    for (const rule of [
      rules["var, a path"],
      rules["sem_ver, constant on the right"],
      rules.starts_with,
      rules["in, a list of literals"],
    ]) {
      expect(String(engine.build(rule))).not.toContain("engine.methods"); // no generic call, no argument array
    }
    expect([compiled({ value: "2.1.0" }), compiled({ value: "1.0.0" }), compiled({}), compiled({ value: "3.0.0" })]).toEqual([
      true,
      false,
      null,
      true,
    ]);
  });
});
