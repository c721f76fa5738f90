/**
 * How every acknowledged write goes to disk (state files, overrides, save to file): to a
 * temporary file, fsynced, renamed over the old one, and the directory fsynced, so that once the
 * promise resolves the new content survives a crash or a power cut, and a reader never sees half
 * a file.
 */
import { open } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";

export interface DurableWriteOptions {
  /** The file's mode; without one, a file written again keeps its own (a new one gets the umask's). */
  mode?: number;
}

/** The mode of every state file: private to its user. */
export const STATE_FILE_MODE = 0o600;

/** Writes `data` to `path` durably (write, fsync, rename, fsync the directory). */
export async function writeFileDurable(path: string, data: string | Uint8Array, { mode }: DurableWriteOptions = {}): Promise<void> {
  await writeFileAtomic(path, typeof data === "string" ? data : Buffer.from(data), { fsync: true, ...(mode !== undefined && { mode }) });
  await syncDirectory(dirname(path));
}

/** The rename is durable once the directory entry is: fsync the directory (not possible on Windows). */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
