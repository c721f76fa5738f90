/** The bundled example is what `npx flagserve` serves with no arguments: it must be valid. */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { Ajv } from "ajv";
import { flagserveSchema, loadConfig } from "../../src/config/index.js";
import { evaluate, isEvaluationError } from "../../src/engine/index.js";
import { problemLines } from "./helpers.js";

const EXAMPLE = fileURLToPath(new URL("../../flags.example.yaml", import.meta.url));

describe("flags.example.yaml", () => {
  it("loads with zero problems: development (fixed key) and production (generated key)", async () => {
    const load = await loadConfig(EXAMPLE);
    expect(problemLines(load, "")).toEqual([]);
    expect([...load.environments.keys()]).toEqual(["development", "production"]);
    expect(load.environments.get("development")!.config.apiKey).toBe("dev-example-key");
    expect(load.environments.get("production")!.config.apiKey).toBeUndefined();
  });

  it("shows every kind of flag, and they evaluate", async () => {
    const dev = (await loadConfig(EXAMPLE)).environments.get("development")!;
    const flag = (key: string) => dev.flags.get(key)!;
    const types = [...dev.flags.values()].map((f) => typeof Object.values(f.variants)[0]);
    expect(new Set(types)).toEqual(new Set(["boolean", "string", "number", "object"]));
    expect([...dev.flags.values()].some((f) => f.state === "DISABLED")).toBe(true);
    expect(Object.keys(dev.config.segments).length).toBeGreaterThan(0);

    expect(evaluate(flag("new-checkout"), { email: "ann@example.com" })).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect(evaluate(flag("new-checkout"), { email: "ann@elsewhere.org" })).toMatchObject({ value: false, reason: "DEFAULT" });
    const split = evaluate(flag("banner-color"), { targetingKey: "user-1", email: "x@y.z" });
    expect(isEvaluationError(split)).toBe(false);
    expect(split).toMatchObject({ reason: "SPLIT" });
    expect(evaluate(flag("banner-color"), { targetingKey: "u", email: "alice@example.org" })).toMatchObject({ value: "#0e8a8a" });
    expect(evaluate(flag("max-upload-mb"), { appVersion: "2.1.0" })).toMatchObject({ value: 100 });
    expect(evaluate(flag("dark-mode"), {})).toMatchObject({ reason: "DISABLED" });
  });

  it("points editors at the published schema, and validates against it", async () => {
    const text = await readFile(EXAMPLE, "utf8");
    expect(text.split("\n")[0]).toBe("# yaml-language-server: $schema=./schema/flagserve.schema.json");
    const validate = new Ajv({ allErrors: true, strict: false }).compile(flagserveSchema);
    expect(validate(parseDocument(text).toJS())).toBe(true);
  });
});
