/**
 * A file of 60 flags edited at random, step by step, as a person edits one: mostly one flag's
 * default variant (what the loader's fast paths are for), now and then a flag's rule (a segment,
 * or one that cannot compile), a flag made invalid, a flag added or removed, or a segment edited.
 * Deterministic: a failing sequence replays from its seed.
 */
import { random } from "./converge.js";

/** A flag as written: its default variant, and which rule it uses. */
type Written = { variant: string; rule: "none" | "beta" | "internal" | "broken" };

const fileOf = (flags: Map<string, Written>, beta: string) =>
  [
    "apiKey: key-random-0123456789",
    "segments:",
    `  beta: { ends_with: [{ var: email }, "${beta}"] }`,
    "  internal: { and: [{ $ref: beta }, { starts_with: [{ var: targetingKey }, user-1] }] }",
    "flags:",
    ...[...flags].flatMap(([key, { variant, rule }]) => [
      `  ${key}:`,
      "    variants: { on: true, off: false }",
      `    defaultVariant: ${variant}`,
      ...(rule === "none" ? [] : [`    targeting: ${rule === "broken" ? "{ nope: [1] }" : `{ if: [{ $ref: ${rule} }, "on", "off"] }`}`]),
    ]),
    "",
  ].join("\n");

/** The file's first text, then `steps` edited texts, each with what the step did. */
export function* randomEdits(seed: number, steps: number): Generator<{ text: string; step: string }> {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const flags = new Map<string, Written>();
  for (let i = 0; i < 60; i++) flags.set(`flag-${i}`, { variant: pick(["on", "off"]), rule: pick(["none", "beta", "internal"]) });
  let beta = "@example.com";
  let added = 60;
  yield { text: fileOf(flags, beta), step: "the first text" };
  for (let step = 1; step <= steps; step++) {
    const keys = [...flags.keys()];
    const kind = pick(["variant", "variant", "variant", "rule", "invalid", "add", "remove", "segment"] as const);
    const key = pick(keys);
    const flag = flags.get(key)!;
    if (kind === "variant") flags.set(key, { ...flag, variant: flag.variant === "on" ? "off" : "on" });
    else if (kind === "rule") flags.set(key, { ...flag, rule: pick(["none", "beta", "internal", "broken"]) });
    else if (kind === "invalid") flags.set(key, { ...flag, variant: "nope" });
    else if (kind === "add") flags.set(`flag-${added++}`, { variant: "on", rule: pick(["none", "beta"]) });
    else if (kind === "remove" && keys.length > 1) flags.delete(key);
    else beta = beta === "@example.com" ? "@example.org" : "@example.com";
    yield { text: fileOf(flags, beta), step: `seed ${seed}, step ${step}: ${kind} ${key}` };
  }
}
