/**
 * The parse worker (parse.ts's parseOffThread): a running server's changed files are decoded and
 * read here, so that requests are answered meanwhile. Plain data goes back: the value as JSON text
 * with the JSON text of each of its flags and segments (what the server tells unchanged entries
 * by, memo.ts), or the problems, each at file:line:col.
 */
import { parentPort } from "node:worker_threads";
import { entryTexts } from "./memo.js";
import { readYaml, textOf, type WorkerReply, type WorkerRequest } from "./parse.js";

parentPort?.on("message", ({ id, file, content }: WorkerRequest) => {
  const text = textOf(file, content);
  const read = "text" in text ? readYaml(file, text.text) : { problems: [text.problem] };
  if (!("value" in read)) return parentPort!.postMessage({ id, ...read } satisfies WorkerReply);
  // As JSON text, which the server parses into objects that take edits cheaply (a structured
  // clone of a 1 000-key mapping is one the first edits are slow to change); as it is when JSON
  // cannot carry it (`.inf`, `.nan`: the checks say so, at their place).
  const value = hasNonFiniteNumber(read.value) ? { value: read.value } : { json: JSON.stringify(read.value) };
  parentPort!.postMessage({ id, ...value, entryTexts: entryTexts(read.value) } satisfies WorkerReply);
});

function hasNonFiniteNumber(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === "number" && !Number.isFinite(node)) return true;
    if (typeof node === "object" && node !== null) stack.push(...Object.values(node));
  }
  return false;
}
