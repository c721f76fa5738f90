/**
 * How the person reading our output can run flagserve again from where they are. flagserve is
 * not always on the PATH (in a clone, or installed in a project, only `npx flagserve` finds it),
 * so a hint written as a bare `flagserve ...` would be "command not found" there.
 */
import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join, relative, resolve, sep } from "node:path";
import { PACKAGE_ROOT } from "./paths.js";

const realPath = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};

const isWithin = (dir: string, path: string): boolean => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** A `flagserve` on the PATH that is this very program (npm link, npm install -g). */
function onPath(env: NodeJS.ProcessEnv, bin: string): boolean {
  const self = realPath(bin);
  const names = process.platform === "win32" ? ["flagserve.cmd", "flagserve.exe", "flagserve"] : ["flagserve"];
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const name of names) if (self !== undefined && realPath(join(dir, name)) === self) return true;
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

/**
 * The command that starts this flagserve from `cwd`: `flagserve` when it is on the PATH,
 * `npx flagserve` when run through npm or when npx finds it locally, else `node <path to the bin>`.
 */
export function invocation(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env, packageRoot: string = PACKAGE_ROOT): string {
  const bin = join(packageRoot, "bin", "flagserve.js");
  if (onPath(env, bin)) return "flagserve";
  if (env.npm_command === "exec" || npxFinds(cwd, packageRoot)) return "npx flagserve";
  const rel = relative(cwd, bin);
  const shown = rel.length < bin.length ? rel : bin;
  return `node ${/\s/.test(shown) ? JSON.stringify(shown) : shown}`;
}
