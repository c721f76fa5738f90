/**
 * `flagserve keys rotate ENV`: a new key where the old one lives — in the YAML file when the file
 * has it, else in the state file. Only the key's own characters change: every other byte of the
 * file (comments, flow collections, quoting, line endings) stays as it was. A running server sees
 * the edit like any other and announces the rotation.
 */
import { readFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import { isMap, isScalar, parseDocument, Scalar } from "yaml";
import type { EnvironmentConfig } from "../config/types.js";
import { generateKey, readKeyState, stateFilePath, writeKeyState } from "./keys.js";

export interface Rotation {
  env: string;
  key: string;
  /** The file the new key was written to. */
  file: string;
}

/** The key as YAML source in the style the old value was written in (plain when it can be). */
function scalarSource(old: Scalar, key: string): string {
  if (old.type === Scalar.QUOTE_SINGLE) return `'${key.replaceAll("'", "''")}'`;
  if (old.type === Scalar.PLAIN && /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(key)) return key;
  return JSON.stringify(key);
}

/**
 * `source` with the `apiKey` at `path` replaced by `key`, or undefined when there is none.
 * A splice on the value's source range, checked by parsing the result.
 */
export function replaceKeyInSource(source: string, path: string[], key: string, file: string): string | undefined {
  const doc = parseDocument(source);
  const node = doc.getIn(path, true);
  if (node === undefined) return undefined;
  if (!isScalar(node) || typeof node.value !== "string" || !node.range) {
    throw new Error(`${file}: ${path.join(".")} is not a plain string; replace it by hand`);
  }
  const [start, end] = node.range;
  const text = `${source.slice(0, start)}${scalarSource(node, key)}${source.slice(end)}`;
  if (parseDocument(text).getIn(path) !== key) throw new Error(`${file}: could not replace ${path.join(".")} safely; replace it by hand`);
  return text;
}

/** Replaces `apiKey` in the file that defines it; undefined when no file does. */
async function rotateInFile(config: EnvironmentConfig, key: string): Promise<string | undefined> {
  for (const file of config.files) {
    const source = await readFile(file, "utf8");
    const environments = parseDocument(source).get("environments", true);
    const path = isMap(environments) && environments.has(config.name) ? ["environments", config.name, "apiKey"] : ["apiKey"];
    const text = replaceKeyInSource(source, path, key, file);
    if (text === undefined) continue;
    // Through a symlink to the real file, keeping its mode and owner; renamed into place so a
    // watcher never sees half a file.
    await writeFileAtomic(file, text);
    return file;
  }
  return undefined;
}

export async function rotateKey(config: EnvironmentConfig, stateDir: string): Promise<Rotation> {
  const key = generateKey(config.name);
  if (config.apiKey !== undefined) {
    const file = await rotateInFile(config, key);
    if (file) return { env: config.name, key, file };
  }
  const state = await readKeyState(stateDir);
  state[config.name] = key;
  await writeKeyState(stateDir, state);
  return { env: config.name, key, file: stateFilePath(stateDir) };
}
