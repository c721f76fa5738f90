/**
 * `flagserve keys rotate ENV`: a new key where the old one lives — rewritten in the YAML file
 * (comments and layout kept) when the file has it, else in the state file. A running server
 * sees the edit like any other and announces the rotation.
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import { isMap, parseDocument } from "yaml";
import type { EnvironmentConfig } from "../config/types.js";
import { generateKey, readKeyState, stateFilePath, writeKeyState } from "./keys.js";

export interface Rotation {
  env: string;
  key: string;
  /** The file the new key was written to. */
  file: string;
}

/** Writes beside the target and renames over it, so a watcher never sees a half-written file. */
async function replaceFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.flagserve-tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/** Replaces `apiKey` in the file that defines it; false when no file does. */
async function rotateInFile(config: EnvironmentConfig, key: string): Promise<string | undefined> {
  for (const file of config.files) {
    const source = await readFile(file, "utf8");
    const doc = parseDocument(source);
    const environments = doc.get("environments", true);
    const path = isMap(environments) && environments.has(config.name) ? ["environments", config.name, "apiKey"] : ["apiKey"];
    if (!doc.hasIn(path)) continue;
    doc.setIn(path, key);
    await replaceFile(file, doc.toString());
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
