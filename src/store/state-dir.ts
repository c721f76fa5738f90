/**
 * Where generated keys are kept when no --state-dir is given: `.flagserve` beside the
 * configuration, except for a configuration inside the installed package (the bundled example,
 * served by `npx flagserve` from npm's cache), which gets a per-user directory instead.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ConfigSource } from "../sources/source.js";

const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

const realPath = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

const isInside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
};

/** `$XDG_STATE_HOME/flagserve`, else `~/.local/state/flagserve` (`%LOCALAPPDATA%\flagserve` on Windows). */
export function userStateDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return join(env.LOCALAPPDATA || join(homedir(), "AppData", "Local"), "flagserve");
  const base = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(base, "flagserve");
}

/**
 * The default state directory for a configuration. Inside the package it is a subdirectory of
 * userStateDir named after the configuration and a digest of its real path, so each installed
 * copy keeps its own keys and nothing is written into the package.
 */
export function defaultStateDir(configPath: string, env: NodeJS.ProcessEnv = process.env, packageRoot: string = PACKAGE_ROOT): string {
  const config = realPath(resolve(configPath));
  if (!isInside(realPath(packageRoot), config)) return join(dirname(resolve(configPath)), ".flagserve");
  const digest = createHash("sha256").update(config).digest("hex").slice(0, 12);
  return join(userStateDir(env), `${basename(config, extname(config))}-${digest}`);
}

/**
 * The default state directory for a list of sources: that of the first file source's path, else
 * `.flagserve` in the working directory.
 */
export function defaultStateDirOf(sources: readonly Pick<ConfigSource, "id" | "kind">[], env: NodeJS.ProcessEnv = process.env): string {
  const files = sources.find((s) => s.kind === "files");
  return files !== undefined ? defaultStateDir(files.id, env) : join(process.cwd(), ".flagserve");
}
