/**
 * How the person reading our output can run flagserve again from where they are. flagserve is
 * not always on the PATH (in a clone, or installed in a project, only `npx flagserve` finds it),
 * so a hint written as a bare `flagserve ...` would be "command not found" there.
 *
 * Started by npm (`npx flagserve`, `npm exec`, an `npm run` script), the PATH is npm's, not the
 * reader's: npm puts every `node_modules/.bin` from the working directory up, and npx's cache,
 * in front of it. A `flagserve` found there proves nothing about the reader's shell.
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, delimiter, dirname, join, relative, resolve, sep } from "node:path";
import { PACKAGE_ROOT } from "./paths.js";

const realPath = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};

const isWithin = (dir: string, path: string): boolean => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** npm started this process: npx and `npm exec` set npm_command=exec, scripts their event's name. */
const startedByNpm = (env: NodeJS.ProcessEnv): boolean => Boolean(env.npm_command || env.npm_lifecycle_event || env.npm_execpath);

/** Started through `npx` or `npm exec`: the reader typed an npx command, which runs flagserve from here. */
const startedByNpx = (env: NodeJS.ProcessEnv): boolean => env.npm_command === "exec" || env.npm_lifecycle_event === "npx";

/** A directory npm adds to the PATH of what it starts: a `node_modules/.bin`, or anything under its cache (npx's installs). */
function addedByNpm(dir: string, env: NodeJS.ProcessEnv): boolean {
  if (basename(dir) === ".bin" && basename(dirname(dir)) === "node_modules") return true;
  return env.npm_config_cache !== undefined && env.npm_config_cache !== "" && isWithin(resolve(env.npm_config_cache), resolve(dir));
}

/** A `flagserve` on the reader's PATH that is this very program (npm link, npm install -g). */
function onPath(env: NodeJS.ProcessEnv, bin: string): boolean {
  const self = realPath(bin);
  if (self === undefined) return false;
  const byNpm = startedByNpm(env);
  const names = process.platform === "win32" ? ["flagserve.cmd", "flagserve.exe", "flagserve"] : ["flagserve"];
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "" || (byNpm && addedByNpm(dir, env))) continue;
    for (const name of names) if (realPath(join(dir, name)) === self) return true;
  }
  return false;
}

/** `npx flagserve` resolves locally here: inside this package (a clone), or a project that installed it. */
function npxFinds(cwd: string, packageRoot: string): boolean {
  const root = realPath(packageRoot) ?? packageRoot;
  if (isWithin(root, realPath(cwd) ?? cwd)) return true;
  for (let at = resolve(cwd); ; at = dirname(at)) {
    if (existsSync(join(at, "node_modules", ".bin", "flagserve"))) return true;
    if (dirname(at) === at) return false;
  }
}

/** One word for a POSIX shell: as it is when no character in it is special, else single-quoted. */
export const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/**
 * `npx flagserve`, as the reader ran it: with the `--package` they named (a tarball, a directory,
 * a version), which plain `npx flagserve` would look up on the registry instead.
 */
function npxCommand(env: NodeJS.ProcessEnv): string {
  const packages = (env.npm_config_package ?? "").split("\n").filter((p) => p !== "" && p !== "flagserve");
  return ["npx", ...packages.map((p) => `--package=${shellWord(p)}`), "flagserve"].join(" ");
}

/**
 * The command that starts this flagserve from `cwd`: through npx when it was started that way
 * (what the reader typed works again from here), `flagserve` when it is on the reader's PATH,
 * `npx flagserve` when npx finds it locally, else `node <path to the bin>`.
 */
export function invocation(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env, packageRoot: string = PACKAGE_ROOT): string {
  const bin = join(packageRoot, "bin", "flagserve.js");
  if (startedByNpx(env)) return npxCommand(env);
  if (onPath(env, bin)) return "flagserve";
  if (npxFinds(cwd, packageRoot)) return "npx flagserve";
  const rel = relative(cwd, bin);
  const shown = rel.length < bin.length ? rel : bin;
  return `node ${shellWord(shown)}`;
}
