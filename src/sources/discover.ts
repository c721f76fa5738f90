/** PATH -> which environments exist and which files make each one (docs/format.md); contents and names are checked by the loader. */
import { basename, extname, join, resolve } from "node:path";
import { compare } from "../model/json.js";
import { errorCode, listDirectory, statPath } from "./files.js";
import type { InputSet } from "./inputs.js";
import type { SourceProblem } from "./source.js";

export interface DiscoveredEnvironment {
  name: string;
  /** Absolute paths, sorted: one file, or a subdirectory's config files (merged in this order). */
  files: string[];
  /** The subdirectory, when the environment is one. */
  dir?: string;
}

export interface Discovery {
  /** PATH, absolute. */
  root: string;
  /** Set when PATH is a file: its content decides its environments (an `environments:` map or one). */
  file?: string;
  environments: DiscoveredEnvironment[];
  problems: SourceProblem[];
}

const CONFIG_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** `development.test.yaml`: test cases for an environment's flags (`flagserve test`), never an environment. */
export const isTestFileName = (name: string): boolean => /\.test\.ya?ml$/i.test(name);

export const isConfigFileName = (name: string): boolean => CONFIG_EXTENSIONS.has(extname(name).toLowerCase()) && !isTestFileName(name);

/** `prod.yaml` -> `prod`. */
export const stemOf = (file: string): string => basename(file, extname(file));

/** With `inputs`, every directory listed and path looked at is recorded there (see ./inputs.ts). */
export async function discover(path: string, inputs?: InputSet): Promise<Discovery> {
  const root = resolve(path);
  const failed = (message: string): Discovery => ({ root, environments: [], problems: [{ env: "", file: root, message }] });
  const kind = await typeOf(root, inputs);
  if (kind === "file") return { root, file: root, environments: [], problems: [] };
  if (kind === "missing") return failed("no such file or directory");
  if (kind === "other") return failed("not a file or directory");
  if (kind !== "directory") return failed(`cannot read: ${kind}`);
  const names = await listNames(root, inputs);
  if (typeof names === "string") return failed(`cannot read directory: ${names}`);

  const problems: SourceProblem[] = [];
  const report = (env: string, file: string, message: string) => problems.push({ env, file, message });
  const byName = new Map<string, DiscoveredEnvironment[]>();
  // stat, not lstat: a symlinked file or directory counts as what it points to. All at once: a
  // directory of a hundred environment files is looked at on every reload.
  const types = await Promise.all(names.map((entry) => typeOf(join(root, entry), inputs)));
  for (const [i, entry] of names.entries()) {
    const full = join(root, entry);
    let env: DiscoveredEnvironment | undefined;
    if (types[i] === "directory") env = { name: entry, files: [], dir: full };
    else if (isConfigFileName(entry)) env = { name: stemOf(entry), files: [full] }; // dangling links too: reading reports them
    if (env) byName.set(env.name, [...(byName.get(env.name) ?? []), env]);
  }

  const environments: DiscoveredEnvironment[] = [];
  for (const [name, candidates] of byName) {
    const [first, ...others] = candidates;
    if (!first) continue;
    if (others.length > 0) {
      // Neither wins: which one is meant is not ours to guess.
      for (const other of others)
        report("", other.dir ?? other.files[0] ?? root, `environment '${name}' is also defined by ${first.dir ?? first.files[0]}`);
      continue;
    }
    if (first.dir) {
      const inner = await listNames(first.dir, inputs);
      if (typeof inner === "string") report(name, first.dir, `cannot read directory: ${inner}`);
      else {
        const files: string[] = [];
        for (const entry of inner) {
          const full = join(first.dir, entry);
          if (isConfigFileName(entry) && (await typeOf(full, inputs)) !== "directory") files.push(full);
        }
        if (files.length === 0) report(name, first.dir, "directory has no .yaml, .yml or .json file");
        first.files = files;
      }
    }
    environments.push(first);
  }
  environments.sort((a, b) => compare(a.name, b.name));
  return { root, environments, problems };
}

/**
 * Entry names in listDirectory's order (by code unit: every replica merges files alike), or the error code. Dot-entries are
 * never configuration: `.git/`, `.flagserve/` (older versions' state), editor swap files, and Kubernetes' ConfigMap internals
 * (`..data`, `..2026_01_01_...`), whose files are reached through the symlinks beside them.
 */
async function listNames(dir: string, inputs?: InputSet): Promise<string[] | string> {
  const names = await listDirectory(dir, inputs);
  return typeof names === "string" ? names : names.filter((name) => !name.startsWith("."));
}

/** "file", "directory", "missing", "other" (socket, device...), or the error code. */
async function typeOf(path: string, inputs?: InputSet): Promise<string> {
  const s = await statPath(path, inputs);
  if (!(s instanceof Error)) return s.isFile() ? "file" : s.isDirectory() ? "directory" : "other";
  const code = errorCode(s);
  return code === "ENOENT" || code === "ENOTDIR" ? "missing" : code;
}
