/**
 * Save to file: a flag's `defaultVariant` and/or `state` rewritten in the file that defines it.
 * Only those scalars' characters change (a splice on their source range, or one inserted line
 * when the key is absent), so comments, key order, quoting and every other byte stay, and the
 * change is a one-line diff. The watcher then reloads it like a hand edit.
 */
import { access, constants, readFile } from "node:fs/promises";
import { sourceKindOf } from "../sources/source.js";
import type { EnvironmentConfig, FlagDefinition } from "../model/types.js";
import { isRecord } from "../model/json.js";
import { yaml } from "../config/yaml-package.js";
import { writeFileDurable } from "../store/durable-write.js";
import { replaceStringInSource, scalarSource } from "../store/yaml-edit.js";
import { AdminError } from "./errors.js";

const isUrlFile = (file: string): boolean => sourceKindOf(file) === "url";

export interface FlagPatch {
  defaultVariant?: string;
  state?: "ENABLED" | "DISABLED";
}

export interface SaveResult {
  file: string;
  /** The fields whose text changed (none when the file already said so). */
  changed: (keyof FlagPatch)[];
}

export function parsePatch(body: unknown): FlagPatch {
  const usage = 'expected {"defaultVariant":"NAME"} and/or {"state":"ENABLED"|"DISABLED"}';
  if (!isRecord(body)) throw new AdminError(400, "INVALID_REQUEST", usage);
  const patch: FlagPatch = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === "defaultVariant" && typeof value === "string" && value !== "") patch.defaultVariant = value;
    else if (key === "state" && (value === "ENABLED" || value === "DISABLED")) patch.state = value;
    else throw new AdminError(400, "INVALID_REQUEST", `${usage}; '${key}' is not accepted as ${JSON.stringify(value)}`);
  }
  if (Object.keys(patch).length === 0) throw new AdminError(400, "INVALID_REQUEST", usage);
  return patch;
}

/**
 * `source` with the flag's `field` set to `value`: the shared byte-preserving splice (as `keys
 * rotate` uses) when the key is there, else one new line at the top of the flag's block mapping.
 */
export function setScalarInSource(source: string, flagPath: string[], field: string, value: string, file = "the file"): string {
  let text: string | undefined;
  try {
    text = replaceStringInSource(source, [...flagPath, field], value, file);
  } catch (error) {
    throw new AdminError(409, "CONFLICT", (error as Error).message);
  }
  if (text !== undefined) return text;
  const { isMap, parseDocument } = yaml();
  const flag = parseDocument(source).getIn(flagPath, true);
  const first = isMap(flag) && !flag.flow ? flag.items[0] : undefined;
  const keyStart = first && (first.key as { range?: [number, number] } | null)?.range?.[0];
  if (keyStart === undefined)
    throw new AdminError(409, "CONFLICT", `the flag has no ${field} line and is not a block mapping; add it by hand`);
  const lineStart = source.lastIndexOf("\n", keyStart - 1) + 1;
  const indent = source.slice(lineStart, keyStart);
  if (!/^[ \t]*$/.test(indent)) throw new AdminError(409, "CONFLICT", `cannot add a ${field} line here; add it by hand`);
  const eol = source.includes("\r\n") ? "\r\n" : "\n";
  text = `${source.slice(0, lineStart)}${indent}${field}: ${scalarSource(undefined, value)}${eol}${source.slice(lineStart)}`;
  const check = parseDocument(text);
  if (check.errors.length > 0 || check.getIn([...flagPath, field]) !== value) {
    throw new AdminError(409, "CONFLICT", `could not add ${field} safely; add it by hand`);
  }
  return text;
}

/** The file of the environment that defines the flag, with the flag's path inside it. */
async function definingFile(config: EnvironmentConfig, flagKey: string): Promise<{ file: string; source: string; path: string[] }> {
  for (const file of config.files) {
    if (isUrlFile(file)) continue; // read over HTTP: nothing to write back
    const source = await readFile(file, "utf8");
    const { isMap, parseDocument } = yaml();
    const doc = parseDocument(source);
    const environments = doc.get("environments", true);
    const path = isMap(environments) ? ["environments", config.name, "flags", flagKey] : ["flags", flagKey];
    if (doc.hasIn(path)) return { file, source, path };
  }
  const where =
    config.files.length === 0
      ? "the environment is not read from files (inline configuration)"
      : config.files.some(isUrlFile)
        ? `it is read from ${config.files.find(isUrlFile)}, which flagserve cannot write`
        : "no file of the environment defines it";
  throw new AdminError(409, "CONFLICT", `cannot save flag ${flagKey} of ${config.name} to a file: ${where}`);
}

function position(source: string, path: string[]): { line: number; col: number } {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const node = parseDocument(source, { lineCounter }).getIn(path, true) as { range?: [number, number] } | undefined;
  return node?.range ? lineCounter.linePos(node.range[0]) : { line: 0, col: 0 };
}

/** Validates the patch against the flag, then rewrites the file that defines it (on disk before it resolves). */
export async function saveFlag(config: EnvironmentConfig, flagKey: string, def: FlagDefinition, patch: FlagPatch): Promise<SaveResult> {
  const { file, source, path } = await definingFile(config, flagKey);
  if (patch.defaultVariant !== undefined && !Object.hasOwn(def.variants, patch.defaultVariant)) {
    const { line, col } = position(source, [...path, "defaultVariant"]);
    const message = `flags.${flagKey}.defaultVariant: '${patch.defaultVariant}' is not one of the variants (${Object.keys(def.variants).join(", ")})`;
    throw new AdminError(422, "INVALID_CONFIG", `the change would make the file invalid: ${message}`, {
      key: flagKey,
      problems: [{ file, line, col, message }],
    });
  }
  try {
    await access(file, constants.W_OK);
  } catch {
    throw new AdminError(409, "CONFLICT", `cannot save flag ${flagKey}: ${file} is not writable`);
  }
  let text = source;
  const changed: (keyof FlagPatch)[] = [];
  for (const field of ["state", "defaultVariant"] as const) {
    const value = patch[field];
    const current = field === "state" ? def.state : def.defaultVariant;
    const written = yaml()
      .parseDocument(text)
      .getIn([...path, field]);
    if (value === undefined || (value === current && written !== undefined)) continue;
    if (field === "state" && value === "ENABLED" && written === undefined) continue; // ENABLED is the default
    text = setScalarInSource(text, path, field, value, file);
    changed.push(field);
  }
  if (changed.length > 0) await writeFileDurable(file, text);
  return { file, changed };
}
