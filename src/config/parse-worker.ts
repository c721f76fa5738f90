/**
 * The parse worker (parse.ts's parseOffThread): a watching server's files (at its first load, then
 * each changed one) are decoded and read here, so that requests are answered meanwhile.
 */
import { parentPort } from "node:worker_threads";
import { takeEntries } from "./memo.js";
import { contentLength, positionsOf, readContent, type Content, type WorkerReply, type WorkerRequest } from "./parse.js";

// A fresh worker reads at about half its later speed (js-yaml's code not yet compiled for it): so
// it reads the first document that parses again, 9 times or up to about 4 MB in all, one read per
// turn of its event loop (a file sent meanwhile waits for one at most): the first edits are not slow.
let warmedUp = false;
function warmUp(file: string, content: Content, times: number): void {
  if (times > 0) setImmediate(() => (readContent(file, content), warmUp(file, content, times - 1)));
}

parentPort?.on("message", ({ id, file, content, places }: WorkerRequest) => {
  if (places) {
    const source = positionsOf(file, content);
    return parentPort!.postMessage({ id, positions: places.map(([path, anchor]) => source.locate(path, anchor)) } satisfies WorkerReply);
  }
  const read = readContent(file, content);
  if (!("value" in read)) return parentPort!.postMessage({ id, ...read } satisfies WorkerReply);
  if (!warmedUp) warmUp(file, content, Math.min(9, Math.floor(4_000_000 / contentLength(content)) - 1));
  warmedUp = true;
  // Values JSON cannot carry (`.inf`, `.nan`: the checks say so, at their place) travel as they are.
  if (read.nonFinite) return parentPort!.postMessage({ id, value: read.value } satisfies WorkerReply);
  // Plain data goes back: each flag and segment as JSON text, and the rest. The server looks the
  // texts up in its last parse (memo.ts) and parses only the new ones, into objects that take edits
  // cheaply (a structured clone of a 1 000-key mapping is one the first edits are slow to change).
  const entryTexts = takeEntries(read.value);
  parentPort!.postMessage({ id, skeleton: JSON.stringify(read.value), entryTexts } satisfies WorkerReply);
});
