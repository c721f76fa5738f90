/** The SOURCE arguments of the commands: paths and URLs, their defaults, and loading them once. */
import { existsSync } from "node:fs";
import type { ConfigLoad } from "../config/index.js";
import type { UrlSourceOptions } from "../sources/url-source.js";
import { sourceKindOf } from "../sources/source.js";
import { resolveConfigPath } from "./paths.js";

export const SOURCES_ARGUMENT_HELP =
  "directories of environment files, files, or http(s):// URLs (default: ./flags, else the bundled example)";

/** What a configuration that defines no environment is told, by `validate` and at start. */
export const NO_ENVIRONMENTS = "no environments found (expected *.yaml, *.yml or *.json files, or subdirectories)";

/** The arguments, else `./flags`, else the bundled example. */
export function resolveSources(args: readonly string[]): { specs: string[]; bundled: boolean } {
  if (args.length > 0) return { specs: [...args], bundled: false };
  const { path, bundled } = resolveConfigPath(undefined);
  return { specs: [path], bundled };
}

/** The paths among `specs` that do not exist (URLs are checked by fetching them). */
export const missingPaths = (specs: readonly string[]): string[] => specs.filter((s) => sourceKindOf(s) === "files" && !existsSync(s));

/** Every source read once (a URL: one GET) and loaded together, as the server would at start-up. */
export async function loadOnce(specs: readonly string[], options: UrlSourceOptions = {}): Promise<ConfigLoad> {
  const [{ loadSourceReads }, { readOnce }] = await Promise.all([import("../config/index.js"), import("../sources/read-once.js")]);
  return loadSourceReads(await Promise.all(specs.map((spec) => readOnce(spec, options))));
}

/** `a, b and c`, for messages naming the sources. */
export const listText = (items: readonly string[]): string =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
