/**
 * src/flagd/generated/ is what `npm run generate:flagd` (buf with protoc-gen-es, buf.gen.yaml)
 * writes from the .proto files in proto/: generated again into a temporary directory and compared
 * file by file.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { tempDir } from "../helpers/files.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GENERATED = join(ROOT, "src/flagd/generated");

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), await readFile(path, "utf8"));
  }
  return files;
}

it("src/flagd/generated/ is what buf generates from proto/ (npm run generate:flagd)", async () => {
  const out = await tempDir("flagserve-generate-");
  await promisify(execFile)(join(ROOT, "node_modules/.bin/buf"), ["generate", "--output", out.path], { cwd: ROOT });
  const fresh = await filesUnder(join(out.path, "src/flagd/generated"));
  const committed = await filesUnder(GENERATED);
  expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
  expect(fresh.size).toBe(3);
  for (const [file, text] of fresh) expect(committed.get(file) === text, `${file}: run npm run generate:flagd`).toBe(true);
}, 30_000);
