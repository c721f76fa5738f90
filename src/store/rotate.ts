/**
 * `flagserve keys rotate ENV`: a new key where the old one lives — in the YAML file when the file
 * has it, else in the state file. Only the key's own characters change: every other byte of the
 * file (comments, flow collections, quoting, line endings) stays as it was. A running server sees
 * the edit like any other and announces the rotation.
 */
import { readFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import type { EnvironmentConfig } from "../model/types.js";
import { generateKey, stateFilePath, updateKeyState } from "./keys.js";
import { replaceStringInSource } from "./yaml-edit.js";
import { yaml } from "../config/yaml-package.js";

export interface Rotation {
  env: string;
  key: string;
  /** The file the new key was written to. */
  file: string;
}

/** Replaces `apiKey` in the file that defines it; undefined when no file does. */
async function rotateInFile(config: EnvironmentConfig, key: string): Promise<string | undefined> {
  for (const file of config.files) {
    const source = await readFile(file, "utf8");
    const { isMap, parseDocument } = yaml();
    const environments = parseDocument(source).get("environments", true);
    const path = isMap(environments) && environments.has(config.name) ? ["environments", config.name, "apiKey"] : ["apiKey"];
    const text = replaceStringInSource(source, path, key, file);
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
  await updateKeyState(stateDir, (state) => {
    state[config.name] = key;
  });
  return { env: config.name, key, file: stateFilePath(stateDir) };
}
