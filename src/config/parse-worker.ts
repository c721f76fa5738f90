/**
 * The parse worker (parse.ts's parseOffThread): a running server's changed files are decoded and
 * read here, so that requests are answered meanwhile. Plain data goes back: the value, or the
 * problems, each at file:line:col.
 */
import { parentPort } from "node:worker_threads";
import { readYaml, textOf, type WorkerReply, type WorkerRequest } from "./parse.js";

parentPort?.on("message", ({ id, file, content }: WorkerRequest) => {
  const text = textOf(file, content);
  const reply: WorkerReply = { id, ...("text" in text ? readYaml(file, text.text) : { problems: [text.problem] }) };
  parentPort!.postMessage(reply);
});
