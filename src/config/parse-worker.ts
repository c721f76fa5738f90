/**
 * The parse worker (parse.ts's parseOffThread): a running server's changed files are decoded and
 * read here, so that requests are answered meanwhile. Plain data goes back: the value with the
 * JSON text of each of its flags and segments (what the server tells unchanged entries by,
 * memo.ts), or the problems, each at file:line:col.
 */
import { parentPort } from "node:worker_threads";
import { entryTexts } from "./memo.js";
import { readYaml, textOf, type WorkerReply, type WorkerRequest } from "./parse.js";

parentPort?.on("message", ({ id, file, content }: WorkerRequest) => {
  const text = textOf(file, content);
  const read = "text" in text ? readYaml(file, text.text) : { problems: [text.problem] };
  const reply: WorkerReply = "value" in read ? { id, value: read.value, entryTexts: entryTexts(read.value) } : { id, ...read };
  parentPort!.postMessage(reply);
});
