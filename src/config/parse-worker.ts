/**
 * Parses big files off the main thread (see parseYamlOffThread): the YAML library parses a
 * document in one synchronous call, during which a running server could answer nothing. Only
 * plain data goes back. The worker keeps the last value of each file it parsed (a few files at
 * most): asked to parse a file again from the value the main thread holds, it sends only what
 * changed (leaveOutUnchanged), not a copy of every flag; and what it sends is mostly JSON text,
 * which the main thread parses a few hundred flags at a time.
 */
import { parentPort } from "node:worker_threads";
import { leaveOutUnchanged } from "./share.js";
import { parseYaml } from "./parse.js";

/** Files whose last value is kept. */
const KEPT_FILES = 16;
const kept = new Map<string, { id: number; value: unknown }>();

parentPort?.on("message", ({ id, file, text, baseId }: { id: number; file: string; text: string; baseId?: number }) => {
  const parsed = parseYaml(file, text);
  const base = kept.get(file);
  kept.delete(file);
  if (parsed.problems.length > 0) {
    parentPort!.postMessage({ id, problems: parsed.problems });
    return;
  }
  kept.set(file, { id, value: parsed.value });
  if (kept.size > KEPT_FILES) kept.delete(kept.keys().next().value!);
  // Without the serving thread's value, everything is sent (as text, see share.ts's Encoded).
  const known = base !== undefined && base.id === baseId;
  parentPort!.postMessage({ id, relative: known, changes: leaveOutUnchanged(known ? base.value : undefined, parsed.value, 0, known) });
});
