/** Real files in a fresh temporary directory, removed afterwards. */
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface TempDir {
  path: string;
  file(name: string): string;
  write(name: string, content: string): Promise<string>;
  remove(): Promise<void>;
}

export async function tempDir(prefix = "flagserve-test-"): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return {
    path,
    file: (name) => join(path, name),
    async write(name, content) {
      const file = join(path, name);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
