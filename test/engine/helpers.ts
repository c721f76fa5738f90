import { expect } from "vitest";
import type { EnvironmentConfig, FlagDefinition, JsonObject, JsonValue, Metadata } from "../../src/model/types.js";
import { compileEnvironment } from "../../src/engine/compile.js";
import { evaluate } from "../../src/engine/evaluate.js";
import type { CompiledFlag, Evaluation } from "../../src/engine/types.js";

export interface FlagSpec {
  state?: "ENABLED" | "DISABLED";
  variants: Record<string, JsonValue>;
  defaultVariant?: string | null;
  /** Loosely typed so test literals need no casts; it is JSON all the same. */
  targeting?: object;
  metadata?: Metadata;
}

export function env(spec: {
  flags?: Record<string, FlagSpec>;
  segments?: Record<string, JsonValue>;
  metadata?: Metadata;
}): EnvironmentConfig {
  const flags: Record<string, FlagDefinition> = {};
  for (const [key, f] of Object.entries(spec.flags ?? {})) {
    const def: FlagDefinition = {
      state: f.state ?? "ENABLED",
      variants: f.variants,
      defaultVariant: f.defaultVariant ?? null,
      metadata: f.metadata ?? {},
    };
    if (f.targeting !== undefined) def.targeting = f.targeting as JsonObject;
    flags[key] = def;
  }
  return {
    name: "test",
    metadata: spec.metadata ?? {},
    segments: spec.segments ?? {},
    flags,
    notifications: [],
    files: [],
  };
}

/** Compile one flag (asserting the environment is valid) and return it. */
export function compileFlag(key: string, spec: FlagSpec, segments: Record<string, JsonValue> = {}): CompiledFlag {
  const { flags, errors } = compileEnvironment(env({ flags: { [key]: spec }, segments }));
  expect(errors).toEqual([]);
  const flag = flags.get(key);
  if (!flag) throw new Error(`flag ${key} missing`);
  return flag;
}

/** Evaluate and return the result, for terse assertions. */
export const run = (flag: CompiledFlag, context: Record<string, unknown> = {}, nowMs?: number): Evaluation =>
  nowMs === undefined ? evaluate(flag, context) : evaluate(flag, context, nowMs);

export const variantOf = (e: Evaluation): string | undefined => ("variant" in e ? e.variant : undefined);
export const reasonOf = (e: Evaluation): string | undefined => ("reason" in e ? e.reason : undefined);
export const errorOf = (e: Evaluation): string | undefined => ("errorCode" in e ? e.errorCode : undefined);
