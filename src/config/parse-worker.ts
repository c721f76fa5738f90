/**
 * The parse worker (parse.ts's parseOffThread): a watching server's files (at its first load, then
 * each changed one) are decoded and read here, so that requests are answered meanwhile. Plain data
 * goes back: the JSON text of each flag and segment (what the server tells unchanged entries by,
 * memo.ts) and of the rest, or the problems, each at file:line:col.
 */
import { parentPort } from "node:worker_threads";
import { takeEntries } from "./memo.js";
import { positionsOf, readContent, type WorkerReply, type WorkerRequest } from "./parse.js";

parentPort?.on("message", ({ id, file, content, places }: WorkerRequest) => {
  if (places) {
    const source = positionsOf(file, content);
    return parentPort!.postMessage({ id, positions: places.map(([path, anchor]) => source.locate(path, anchor)) } satisfies WorkerReply);
  }
  const read = readContent(file, content);
  if (!("value" in read)) return parentPort!.postMessage({ id, ...read } satisfies WorkerReply);
  // Values JSON cannot carry (`.inf`, `.nan`: the checks say so, at their place) travel as they are.
  if (read.nonFinite) return parentPort!.postMessage({ id, value: read.value } satisfies WorkerReply);
  // Each flag and segment as JSON text, and the rest: the server looks the texts up in its last
  // parse and parses only the new ones, into objects that take edits cheaply (a structured clone
  // of a 1 000-key mapping is one the first edits are slow to change).
  const entryTexts = takeEntries(read.value);
  parentPort!.postMessage({ id, skeleton: JSON.stringify(read.value), entryTexts } satisfies WorkerReply);
});
