/**
 * A fresh parse worker reads its first document again between the files it is sent
 * (parse-worker.ts's warmUp). What it is sent meanwhile is read as sent, as this thread reads it:
 * documents sent as soon as the first is answered, when the worker is reading the first again,
 * one of them with a value JSON cannot carry (`.inf`, which travels as a value, not as texts).
 * The built worker (dist/), in a process of its own (vitest.config.ts), so that it is fresh.
 */
import { expect, it } from "vitest";
import type * as Memo from "../../src/config/memo.js";
import type * as Parse from "../../src/config/parse.js";

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
const { parseContent, parseOffThread, parseWorkerRunning } = (await dist("config/parse.js")) as typeof Parse;
const { fillEntries } = (await dist("config/memo.js")) as typeof Memo;

/** A file of `count` flags, flag 7 serving `f7`. */
const flagsYaml = (count: number, f7: string) =>
  [
    "flags:",
    ...Array.from({ length: count }, (_, i) => `  f${i}: { variants: { on: true, off: false }, defaultVariant: ${i === 7 ? f7 : "off"} }`),
  ].join("\n");

/** The worker's answer made whole, as the loader makes it. */
async function readByWorker(file: string, text: string): Promise<unknown> {
  const read = await parseOffThread(file, { text });
  expect(read.problems).toEqual([]);
  if (read.entryTexts) fillEntries(read.value, read.entryTexts);
  return read.value;
}

it("reads what it is sent while it reads its first document again, as this thread reads it", async () => {
  expect(parseWorkerRunning()).toBe(false);
  const first = flagsYaml(2000, "off");
  expect(await readByWorker("first.yaml", first)).toEqual(parseContent("first.yaml", { text: first }).value);
  const edited = flagsYaml(2000, "on");
  const nonFinite = "flags:\n  f: { variants: { big: .inf, small: 1 }, defaultVariant: big }\n";
  const [editedRead, nonFiniteRead] = await Promise.all([readByWorker("first.yaml", edited), readByWorker("inf.yaml", nonFinite)]);
  expect(editedRead).toEqual(parseContent("first.yaml", { text: edited }).value);
  expect((editedRead as { flags: Record<string, { defaultVariant: string }> }).flags.f7!.defaultVariant).toBe("on");
  expect(nonFiniteRead).toEqual({ flags: { f: { variants: { big: Infinity, small: 1 }, defaultVariant: "big" } } });
});
