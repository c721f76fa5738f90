/** Helpers of the configuration tests. */
import { beforeEach } from "vitest";
import { formatProblem, type ConfigLoad } from "../../src/config/index.js";
import { tempDir, type TempDir } from "../helpers/files.js";

/** A fresh temporary directory for each test (see tempDir); the returned object is filled in before each test. */
export function useTempDir(): TempDir {
  const t = {} as TempDir;
  beforeEach(async () => {
    Object.assign(t, await tempDir("flagserve-config-"));
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
