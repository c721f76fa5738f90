/** Real files in a fresh temp directory per test, removed afterwards. */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { formatProblem, type ConfigLoad } from "../../src/config/index.js";

export interface TempDir {
  /** Absolute, symlinks resolved (macOS's /var -> /private/var would otherwise differ). */
  path: string;
  /** Writes `text` at `rel` (creating directories); returns the absolute path. */
  write(rel: string, text: string): Promise<string>;
  link(rel: string, target: string): Promise<string>;
  mkdir(rel: string): Promise<string>;
}

/** Registers before/after hooks; the returned object is filled in before each test. */
export function useTempDir(): TempDir {
  const t = {} as TempDir;
  beforeEach(async () => {
    const path = await realpath(await mkdtemp(join(tmpdir(), "flagserve-config-")));
    t.path = path;
    t.write = async (rel, text) => {
      const file = join(path, rel);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
      return file;
    };
    t.link = async (rel, target) => {
      const file = join(path, rel);
      await mkdir(dirname(file), { recursive: true });
      await symlink(target, file);
      return file;
    };
    t.mkdir = async (rel) => {
      const d = join(path, rel);
      await mkdir(d, { recursive: true });
      return d;
    };
  });
  afterEach(async () => {
    await rm(t.path, { recursive: true, force: true });
  });
  return t;
}

/** Every problem as `file:line:col message`, with the temp directory shown as `<dir>`. */
export function problemLines(load: ConfigLoad, dir: string, key?: string): string[] {
  const keys = key === undefined ? [...load.problems.keys()] : [key];
  const show = (text: string) => (dir === "" ? text : text.split(dir).join("<dir>"));
  return keys.flatMap((k) => (load.problems.get(k) ?? []).map((p) => show(formatProblem(p))));
}

/** YAML text from lines, so that line numbers in assertions are easy to count. */
export const lines = (...text: string[]): string => `${text.join("\n")}\n`;
