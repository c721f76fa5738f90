/**
 * Reading configuration files so that what is read can be trusted and re-checked:
 * - only regular files (after following symlinks) are read, up to a size cap and within a time
 *   limit, so a FIFO, a device (`/dev/zero`) or a stuck mount costs a problem, not the server;
 * - a file is accepted once it was read whole with the same signature before and after, and
 *   that signature has been stable for a settle window (`settleLeft`), so a half-written file is
 *   read again rather than loaded;
 * - every path read, listed or looked at is recorded in an `InputSet` with its signature
 *   (type, inode, size, mtime, ctime, and a content hash), which `changed()` re-checks with a stat.
 */
import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { open, readdir, stat, type FileHandle } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { Input, InputSet } from "./inputs.js";

/** Larger files are a problem, not a read (a config file is kilobytes; a runaway one would eat memory). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** A read that takes longer (a stuck network or FUSE mount) is a problem; the rest keeps working. */
export const READ_TIMEOUT_MS = 5_000;
/**
 * A file is taken once its signature has not changed for this long. Writers that write a file in
 * one go (editors, `cp`, `writeFile`, git) are done within a millisecond; this is the margin for
 * one that pauses between writes.
 */
export const SETTLE_MS = 20;
/**
 * A file seen changing while it was being read (a writer at work, writing it piece by piece)
 * must then stay unchanged this long: such a writer has shown it pauses.
 */
export const WRITER_SETTLE_MS = 40;
/**
 * An empty file is nearly always one being rewritten (truncated, not yet written): it must stay
 * empty this long to be taken as such, so a writer held up between the two is not reported.
 */
export const EMPTY_SETTLE_MS = 500;
/** A file still changing after this long is reported as such; the next check reads it again. */
const SETTLE_DEADLINE_MS = 2_000;
/**
 * How long after a file's last change another write may leave its timestamps as they were, so
 * that an unchanged stat does not prove unchanged bytes: a file system that keeps whole seconds
 * (FAT keeps two) could hide a rewrite of the same size for that long. A read made within it is
 * racy (as git says): only its content hash proves it.
 */
export const RACY_MS = 2_000;

/**
 * A file's content as read, not decoded: the loader decodes it where it parses it (the parse
 * worker, for a running server's edits). The hash tells the loader it read these bytes before.
 */
export type FileRead = FileContent | { error: string };
export interface FileContent {
  bytes: Uint8Array;
  /** sha256 of the bytes (base64url). */
  hash: string;
}

const errorCode = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);

/** Type, inode, size and timestamps: what changes when a file is written, replaced or removed. */
export const statSignature = (s: Stats): string =>
  `${s.isFile() ? "file" : s.isDirectory() ? "dir" : "other"}:${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

/** The signature of what is at `path` now (symlinks followed); an error code when there is nothing to stat. */
async function signatureOf(path: string): Promise<string> {
  try {
    return statSignature(await stat(path));
  } catch (error) {
    return `error:${errorCode(error)}`;
  }
}

/** The hash of a file's bytes as read: sha256, base64url. */
export const hashOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("base64url");

const kindOf = (s: Stats): string =>
  s.isFIFO()
    ? "a FIFO"
    : s.isCharacterDevice()
      ? "a character device"
      : s.isBlockDevice()
        ? "a block device"
        : s.isSocket()
          ? "a socket"
          : s.isDirectory()
            ? "a directory"
            : "not a file";

const MIB = 1024 * 1024;
export const sizeText = (bytes: number): string => (bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`);

/**
 * One look at a file: its bytes, not read yet, or why it cannot be read. `before` is the signature
 * of the open file before reading, or of the path when it could not be opened.
 */
type RawRead =
  | {
      bytes: Uint8Array;
      before: string;
      /** Of the path after reading. */
      after: string;
      /**
       * Set when the bytes were read so soon after the last change that a write since then may have
       * left the timestamps as they were (see RACY_MS): until this time has passed, only the
       * content tells whether the file is as read.
       */
      racyUntil?: number;
    }
  /** Not read: the file as stat'ed is to stay as it is this much longer first (see `settleLeft`). */
  | { waitMs: number; before: string }
  | { error: string; before: string };

const notRegular = (s: Stats): string => `not a regular file (${kindOf(s)}): only regular files are read`;

/**
 * The regular file at `path`, open, with its fstat; or why not, with the signature of what is
 * there. Opened non-blocking, so that a FIFO swapped in after a stat cannot block the open, and
 * checked with fstat before anything is read. The caller closes the handle.
 */
async function openRegularFile(
  path: string,
): Promise<{ handle: FileHandle; s: Stats; statAt: number } | { error: string; before: string }> {
  // Not even opened when it is not a regular file (opening a device can have effects).
  const first = await stat(path).catch(() => undefined);
  if (first && !first.isFile()) return { error: notRegular(first), before: statSignature(first) };
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { error: `cannot read file: ${errorCode(error)}`, before: await signatureOf(path) };
  }
  try {
    const statAt = Date.now();
    const s = await handle.stat();
    if (s.isFile()) return { handle, s, statAt };
    void handle.close().catch(() => {});
    return { error: notRegular(s), before: statSignature(s) };
  } catch (error) {
    void handle.close().catch(() => {});
    throw error;
  }
}

/** How much longer (ms) a file, as its stat asked for at `statAt` shows it, must stay as it is before it is read. */
type WaitFor = (s: Stats, signature: string, statAt: number) => number;

interface ReadOnceOptions {
  maxBytes: number;
  timeoutMs: number;
  racyMs?: number;
  waitFor?: WaitFor;
}

/**
 * One read of a regular file (openRegularFile), bounded in size and time. When `waitFor` says from
 * its fstat that it must stay as it is longer, it is not read: a file just written is read once,
 * when it has settled, not once more before.
 */
async function readOnce(path: string, { maxBytes, timeoutMs, racyMs = RACY_MS, waitFor }: ReadOnceOptions): Promise<RawRead> {
  const opened = await openRegularFile(path);
  if ("error" in opened) return opened;
  const { handle, s, statAt } = opened;
  try {
    const before = statSignature(s);
    if (s.size > maxBytes) return { error: `file is larger than ${sizeText(maxBytes)} (${s.size} bytes)`, before };
    const waitMs = waitFor?.(s, before, statAt) ?? 0;
    if (waitMs > 0) return { waitMs, before };
    const readAt = Date.now();
    const racyUntil = Math.max(s.mtimeMs, s.ctimeMs) + racyMs;
    const result = await withTimeout(readAtMost(handle, maxBytes + 1, s.size), timeoutMs);
    if (result === undefined) return { error: `reading the file took longer than ${timeoutMs / 1000} s`, before };
    if (result.length > maxBytes) return { error: `file is larger than ${sizeText(maxBytes)}`, before };
    return {
      bytes: result,
      before,
      after: await signatureOf(path),
      ...(readAt <= racyUntil && { racyUntil }),
    };
  } finally {
    // Not awaited: close waits for a pending read, and a read that timed out may never end.
    void handle.close().catch(() => {});
  }
}

/**
 * Up to `limit` bytes of the file, read into one buffer sized for the file as it was stat'ed (one
 * byte more, to see it grow), grown when it does.
 */
async function readAtMost(handle: FileHandle, limit: number, expected: number): Promise<Uint8Array> {
  let buffer = Buffer.allocUnsafe(Math.min(limit, expected + 1));
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      if (total >= limit) break;
      const bigger = Buffer.allocUnsafe(Math.min(limit, buffer.length * 2));
      buffer.copy(bigger, 0, 0, total);
      buffer = bigger;
    }
    const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return buffer.subarray(0, total);
}

/** `work`'s result, or undefined when it takes longer than `ms`. */
export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  const timer = new AbortController();
  try {
    return await Promise.race([work, sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined)]);
  } finally {
    timer.abort();
  }
}

export interface ReadOptions {
  /** Where the read is recorded for later checks. */
  inputs?: InputSet;
  maxBytes?: number;
  timeoutMs?: number;
  /** The texts of the last read: a file whose signature proves it unchanged is not read again. */
  texts?: FileTexts;
}

/** A file's content as last read whole, with what proves it unchanged since. */
interface KnownText extends FileContent {
  signature: string;
  /** Read so soon after its last change that its signature does not prove it (RawRead). */
  racyUntil?: number;
}

/**
 * The files one reader (a file source) read last time, so that an unchanged file is not read
 * again: its signature is what a convergence check (FileInput) trusts, and a read so soon after
 * the file's last change that timestamps could hide a rewrite is made again. Holds the files of
 * the last read only.
 */
export class FileTexts {
  #last = new Map<string, KnownText>();
  #now = new Map<string, KnownText>();
  /** Files read from disk since this was made. */
  reads = 0;
  /** Bytes read from disk since this was made (a file read twice counts twice). */
  bytesRead = 0;

  /** `racyMs`: instead of RACY_MS, how long after a change a read is racy (0: never; for tests). */
  constructor(readonly racyMs?: number) {}

  /** The content of `path` when its signature now is the one it was read with, and that proves it. */
  async unchanged(path: string, inputs: InputSet | undefined): Promise<FileContent | undefined> {
    const known = this.#last.get(path);
    if (known === undefined || known.racyUntil !== undefined) return undefined;
    if ((await signatureOf(path)) !== known.signature) return undefined;
    this.#now.set(path, known);
    inputs?.add(new FileInput(path, known.signature));
    return { bytes: known.bytes, hash: known.hash };
  }

  set(path: string, known: KnownText): void {
    this.#now.set(path, known);
  }

  /** A read of the source is done: files it did not read are forgotten. */
  end(): void {
    this.#last = this.#now;
    this.#now = new Map();
  }
}

/** What a file's stat shows, and what this reader saw of it before, for `settleLeft`. */
export interface SettleState {
  size: number;
  /** The later of its mtime and ctime (ms since the epoch). */
  changedAt: number;
  /** Its ctime is after its mtime. */
  metadataLast: boolean;
  /** When this reader first saw its current signature. */
  seenAt: number;
  /** This reader saw it with another signature before (or changing during a read). */
  seenChanging: boolean;
}

/**
 * How much longer (ms) a file must stay as it is before it is read; 0: read it now. `checkedAt` is
 * when the stat that showed it so was asked for (not when we got to look at the answer: a server
 * held up in between has not seen the file any longer).
 * - ctime after mtime means the inode's last change was not a write: renamed into place (an
 *   atomic write: the new inode appears complete), or back-dated by `cp -p`, rsync or tar after
 *   its content was written. Every write sets both, so a writer still writing cannot show it.
 * - Otherwise it must have been quiet for the settle window, counted from its own timestamps or
 *   from when we first saw it, whichever is longer (a clock ahead of ours cannot stall us);
 *   longer for an empty file or one seen changing.
 */
export function settleLeft(file: SettleState, checkedAt: number): number {
  if (file.size > 0 && file.metadataLast && !file.seenChanging) return 0;
  const settle = file.size === 0 ? EMPTY_SETTLE_MS : file.seenChanging ? WRITER_SETTLE_MS : SETTLE_MS;
  const quiet = Math.max(checkedAt - file.changedAt, checkedAt - file.seenAt);
  return Math.max(0, settle - quiet);
}

/**
 * The text of a regular file once it is stable (see `settleLeft`), or why it cannot be had.
 * Either way the path is recorded, so a later check sees it change (or appear).
 */
export async function readStableFile(path: string, options: ReadOptions = {}): Promise<FileRead> {
  const { inputs, maxBytes = MAX_FILE_BYTES, timeoutMs = READ_TIMEOUT_MS, texts } = options;
  const unchanged = await texts?.unchanged(path, inputs);
  if (unchanged !== undefined) return unchanged;
  if (texts) texts.reads++;
  const deadline = Date.now() + SETTLE_DEADLINE_MS;
  let seen: { signature: string; at: number } | undefined;
  let seenChanging = false;
  // Settled or not is judged from the fstat before reading; the read is taken if the file stayed as stat'ed.
  const waitFor: WaitFor = (s, signature, statAt) => {
    if (seen !== undefined && seen.signature !== signature) seenChanging = true;
    if (seen?.signature !== signature) seen = { signature, at: statAt };
    const [changedAt, metadataLast] = [Math.max(s.mtimeMs, s.ctimeMs), s.ctimeMs > s.mtimeMs];
    return settleLeft({ size: s.size, changedAt, metadataLast, seenAt: seen.at, seenChanging }, statAt);
  };
  for (;;) {
    const read = await readOnce(path, { maxBytes, timeoutMs, racyMs: texts?.racyMs, waitFor });
    if ("error" in read) {
      inputs?.add(new FileInput(path, read.before));
      return { error: read.error };
    }
    const now = Date.now();
    if ("waitMs" in read) {
      if (now >= deadline) break;
      await sleep(Math.min(read.waitMs, WRITER_SETTLE_MS));
      continue;
    }
    if (texts) texts.bytesRead += read.bytes.length;
    if (read.before === read.after) {
      const hash = hashOf(read.bytes);
      inputs?.add(new FileInput(path, read.after, hash, read.racyUntil));
      texts?.set(path, { bytes: read.bytes, hash, signature: read.after, racyUntil: read.racyUntil });
      return { bytes: read.bytes, hash };
    }
    seenChanging = true; // written to while we read: read it again shortly
    if (now >= deadline) break;
    await sleep(SETTLE_MS / 4);
  }
  inputs?.add(new FileInput(path, ""));
  return { error: `file kept changing for ${SETTLE_DEADLINE_MS / 1000} s while being read` };
}

/**
 * A file as read: changed when its signature differs, or, when it was read so soon after its last
 * change that timestamps could hide a rewrite of the same size (`racyUntil`, see RawRead), when
 * its content hash differs. The first check that finds the same hash once that time has passed
 * proves it as read: a later write moves the timestamps.
 */
class FileInput implements Input {
  constructor(
    readonly id: string,
    private readonly signature: string,
    private readonly hash?: string,
    private racyUntil?: number,
  ) {}

  async changed(): Promise<boolean> {
    if ((await signatureOf(this.id)) !== this.signature) return true;
    if (this.hash === undefined || this.racyUntil === undefined) return false;
    const hashedAt = Date.now();
    if ((await contentHashOf(this.id)) !== this.hash) return true;
    if (hashedAt > this.racyUntil) this.racyUntil = undefined;
    return false;
  }
}

/** Bytes hashed per read of contentHashOf. */
const HASH_CHUNK_BYTES = 64 * 1024;

/**
 * The content hash of the regular file at `path` (undefined when it cannot be read whole, as
 * readOnce would), read a chunk at a time: the periodic check hashes a file read racily (FileInput).
 */
export async function contentHashOf(path: string): Promise<string | undefined> {
  const opened = await openRegularFile(path);
  if ("error" in opened) return undefined;
  const { handle } = opened;
  try {
    const hash = createHash("sha256");
    const chunk = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
    const whole = async (): Promise<boolean> => {
      for (let total = 0; ;) {
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) return true;
        if ((total += bytesRead) > MAX_FILE_BYTES) return false;
        hash.update(chunk.subarray(0, bytesRead));
      }
    };
    return (await withTimeout(whole(), READ_TIMEOUT_MS)) ? hash.digest("base64url") : undefined;
  } finally {
    void handle.close().catch(() => {});
  }
}

/** A path whose type was looked at: changed when its signature differs. */
class PathInput implements Input {
  constructor(
    readonly id: string,
    private readonly signature: string,
  ) {}

  async changed(): Promise<boolean> {
    return (await signatureOf(this.id)) !== this.signature;
  }
}

/** A directory's entry names (or the error listing it gave): changed when they differ. */
class ListingInput implements Input {
  constructor(
    readonly id: string,
    private readonly listing: string,
  ) {}

  async changed(): Promise<boolean> {
    return listingOf(await listOnce(this.id)) !== this.listing;
  }
}

const listingOf = (names: string[] | string): string => (typeof names === "string" ? `error:${names}` : names.join("\0"));

async function listOnce(dir: string): Promise<string[] | string> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    return errorCode(error);
  }
}

/** A directory's entry names (sorted by code unit), or the error code; recorded. */
export async function listDirectory(dir: string, inputs?: InputSet): Promise<string[] | string> {
  const names = await listOnce(dir);
  inputs?.add(new ListingInput(dir, listingOf(names)));
  return names;
}

/** The stats of what `path` is now (symlinks followed), or the error; recorded. */
export async function statPath(path: string, inputs?: InputSet): Promise<Stats | NodeJS.ErrnoException> {
  try {
    const s = await stat(path);
    inputs?.add(new PathInput(path, statSignature(s)));
    return s;
  } catch (error) {
    inputs?.add(new PathInput(path, `error:${errorCode(error)}`));
    return error as NodeJS.ErrnoException;
  }
}

/**
 * Records a file that someone else reads (the key state file): its signature and content hash
 * now, before that read, so that any change from here on shows.
 */
export async function recordFile(path: string, inputs: InputSet): Promise<void> {
  const read = await readOnce(path, { maxBytes: MAX_FILE_BYTES, timeoutMs: READ_TIMEOUT_MS });
  inputs.add("bytes" in read ? new FileInput(path, read.before, hashOf(read.bytes), read.racyUntil) : new FileInput(path, read.before));
}
