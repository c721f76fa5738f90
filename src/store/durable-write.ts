/**
 * A file write that is on disk when it resolves: the data goes to a temporary file in the same
 * directory, is flushed (fsync), renamed over the target, and the directory is flushed so the
 * rename itself survives a crash. A reader sees the old file or the new one, never a part.
 */
import { randomBytes } from "node:crypto";
import { open, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function writeFileDurable(path: string, data: string | Uint8Array, options: { mode?: number } = {}): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  // Without a mode, a file written again keeps its own (as write-file-atomic does).
  const mode = options.mode ?? (await stat(path).then((s) => s.mode & 0o7777, () => 0o644));
  const file = await open(temp, "wx", mode);
  try {
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

/** Flushes a directory's entries (the rename); some platforms cannot open a directory for that. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
  } catch {
    return;
  }
  try {
    await handle.sync().catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EINVAL" && error.code !== "EPERM" && error.code !== "EISDIR") throw error;
    });
  } finally {
    await handle.close();
  }
}
