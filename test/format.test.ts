/**
 * The code is written as the project's formatter writes it (prettier, with .prettierrc.json and
 * .prettierignore): one layout, no style review. `npm run format` rewrites what this names.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const IGNORE = join(ROOT, ".prettierignore");

/** The files git tracks (a clean clone's), or, outside a git checkout, none to check. */
function trackedFiles(): string[] {
  try {
    return execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

// Formats every tracked file: about 10 s alone, twice that beside the rest of the suite.
it("every source, test, bench and page file is formatted (npm run format)", { timeout: 60_000 }, async () => {
  const unformatted: string[] = [];
  for (const file of trackedFiles()) {
    const path = join(ROOT, file);
    const info = await prettier.getFileInfo(path, { ignorePath: IGNORE });
    if (info.ignored || info.inferredParser === null) continue;
    const options = await prettier.resolveConfig(path);
    if (!(await prettier.check(readFileSync(path, "utf8"), { ...options, filepath: path }))) unformatted.push(file);
  }
  expect(unformatted).toEqual([]);
});
