/** The errors an operator throws to `evaluate`: recognisable, readable, and cheap to throw. */
import { afterEach, describe, expect, it } from "vitest";
import { TargetingKeyMissingError, TargetingParseError } from "../../src/engine/errors.js";

describe("evaluation errors", () => {
  const limit = Error.stackTraceLimit;
  afterEach(() => {
    Error.stackTraceLimit = limit;
  });

  it("keep their class, name and message, without a stack trace", () => {
    for (const [Class, name] of [
      [TargetingKeyMissingError, "TargetingKeyMissingError"],
      [TargetingParseError, "TargetingParseError"],
    ] as const) {
      const error = new Class("what went wrong");
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(Class);
      expect([error.name, error.message]).toEqual([name, "what went wrong"]);
      expect(error.stack).toBe(`${name}: what went wrong`);
    }
  });

  it("leave stack traces as they were for every other error, whatever the limit was", () => {
    for (const setting of [10, 3]) {
      Error.stackTraceLimit = setting;
      new TargetingKeyMissingError("signal");
      expect(Error.stackTraceLimit).toBe(setting);
      expect(new Error("a bug").stack!.split("\n").length).toBeGreaterThan(1);
    }
  });
});
