/**
 * How every acknowledged write goes to disk (state files, overrides, save to file): to a
 * temporary file, fsynced, renamed over the old one, and the directory fsynced, so that once the
 * promise resolves the new content survives a crash or a power cut, and a reader never sees half
 * a file.
 */
import { randomBytes } from "node:crypto";
import { link, open, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";

export interface DurableWriteOptions {
  /** The file's mode; without one, a file written again keeps its own (a new one gets the umask's). */
  mode?: number;
  /**
   * Only when nothing is at `path`: a file that appears meanwhile is kept, and the write fails
   * with EEXIST (the file is linked into place, which never replaces; where the file system has
   * no hard links, it is renamed, as without this option).
   */
  exclusive?: boolean;
}

/** The mode of every state file: private to its user. */
export const STATE_FILE_MODE = 0o600;

/** Writes `data` to `path` durably (write, fsync, rename, fsync the directory). */
export async function writeFileDurable(
  path: string,
  data: string | Uint8Array,
  { mode, exclusive = false }: DurableWriteOptions = {},
): Promise<void> {
  if (!exclusive || !(await createDurable(path, data, mode)))
    await writeFileAtomic(path, typeof data === "string" ? data : Buffer.from(data), { fsync: true, ...(mode !== undefined && { mode }) });
  await syncDirectory(dirname(path));
}

/** Writes a new file beside `path`, fsynced, and links it into place; false where links cannot be made. */
async function createDurable(path: string, data: string | Uint8Array, mode = 0o666): Promise<boolean> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.new`;
  const handle = await open(temporary, "wx", mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") throw error;
    return false;
  } finally {
    await unlink(temporary).catch(() => {});
  }
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
