/** Context is plain data: attributes are its own keys, never what sits on a prototype. */
import { describe, expect, it } from "vitest";
import { contextAttributes } from "../../src/engine/context.js";
import { compileFlag, run } from "./helpers.js";

const rule = (targeting: object) =>
  compileFlag("f", { variants: { yes: "yes", no: "no", Object: "Object", Array: "Array" }, defaultVariant: "no", targeting });

/** The body as the HTTP layer receives it: JSON.parse keeps `__proto__` as an own key. */
const fromJson = (text: string) => contextAttributes(JSON.parse(text) as Record<string, unknown>);

describe("context attributes are own keys only", () => {
  it("a `__proto__` key in the context does not become the prototype of the attributes", () => {
    const flag = rule({ if: [{ var: "admin" }, "yes", null] });
    expect(run(flag, fromJson('{"__proto__":{"admin":true}}'))).toMatchObject({ variant: "no", reason: "DEFAULT" });
    expect(run(flag, fromJson('{"properties":{"__proto__":{"admin":true}}}'))).toMatchObject({ variant: "no", reason: "DEFAULT" });
    // the same attribute given plainly does match, so the rule itself works
    expect(run(flag, fromJson('{"admin":true}'))).toMatchObject({ variant: "yes", reason: "TARGETING_MATCH" });
  });

  it("`__proto__` stays readable as an ordinary attribute name", () => {
    const flag = rule({ if: [{ var: "__proto__.admin" }, "yes", null] });
    expect(run(flag, fromJson('{"__proto__":{"admin":true}}'))).toMatchObject({ variant: "yes" });
  });

  it.each([
    ["var: constructor.name", { var: "constructor.name" }, {}],
    ["var on a nested object", { var: "user.constructor.name" }, { user: { id: 1 } }],
    ["var on a list", { var: "list.constructor.name" }, { list: [1] }],
    ["var with a default", { var: ["user.constructor.name", null] }, { user: {} }],
    ["val", { val: ["user", "constructor", "name"] }, { user: {} }],
    ["get", { get: [{ var: "user" }, "constructor.name"] }, { user: {} }],
  ])("%s does not read inherited properties", (_name, targeting, context) => {
    expect(run(rule(targeting), context)).toMatchObject({ variant: "no", reason: "DEFAULT" });
  });

  it("missing and exists see inherited names as missing", () => {
    expect(run(rule({ if: [{ missing: ["toString", "constructor"] }, "yes", "no"] }), {})).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ missing_some: [1, ["hasOwnProperty", "valueOf"]] }, "yes", "no"] }), {})).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ exists: "constructor" }, "yes", "no"] }), {})).toMatchObject({ variant: "no" });
  });

  it("own keys still resolve through every lookup form", () => {
    const ctx = { user: { name: "ada", tags: ["x", "y"] }, "a.b": 1 };
    expect(run(rule({ if: [{ "==": [{ var: "user.name" }, "ada"] }, "yes", null] }), ctx)).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ "==": [{ var: "user.tags.1" }, "y"] }, "yes", null] }), ctx)).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ "==": [{ val: ["user", "name"] }, "ada"] }, "yes", null] }), ctx)).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ "==": [{ var: "a\\.b" }, 1] }, "yes", null] }), ctx)).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ missing: ["user.name"] }, null, "yes"] }), ctx)).toMatchObject({ variant: "yes" });
    expect(run(rule({ if: [{ exists: "user" }, "yes", null] }), ctx)).toMatchObject({ variant: "yes" });
    // iterators and scope climbing
    const some = rule({ if: [{ some: [{ var: "user.tags" }, { "==": [{ var: "" }, "y"] }] }, "yes", null] });
    expect(run(some, ctx)).toMatchObject({ variant: "yes" });
  });
});
