/**
 * Parses one big file off the main thread (see parseYamlOffThread): the YAML library parses a
 * document in one synchronous call, seconds for tens of thousands of flags, during which a
 * running server could answer nothing. Only plain data comes back.
 */
import { parentPort, workerData } from "node:worker_threads";
import { parseYaml } from "./parse.js";

const { file, text } = workerData as { file: string; text: string };
const parsed = parseYaml(file, text);
parentPort?.postMessage({ value: parsed.value, problems: parsed.problems });
