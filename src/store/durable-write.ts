/**
 * How every state file is written (keys, rotations, the admin token, overrides): to a temporary
 * file, fsynced, renamed over the old one, and the directory fsynced, so that once the promise
 * resolves the new content survives a crash or a power cut, and a reader never sees half a file.
 */
import { open } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";

export interface DurableWriteOptions {
  /** The file's mode (default 0600: state is private to its user). */
  mode?: number;
}

/** Writes `data` to `path` durably (write, fsync, rename, fsync the directory). */
export async function writeFileDurable(path: string, data: string | Buffer, { mode = 0o600 }: DurableWriteOptions = {}): Promise<void> {
  await writeFileAtomic(path, data, { mode, fsync: true });
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
