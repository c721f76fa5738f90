/**
 * Reading configuration files so that what is read can be trusted and checked again: only regular
 * files, capped in size and time (a FIFO, `/dev/zero` or a stuck mount costs a problem, not the
 * server); a file only once settled and read whole (docs/architecture.md, "A half-written file never
 * loads"); every path read, listed or looked at recorded in an `InputSet`, for the reloader to check.
 */
import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { open, readdir, stat, type FileHandle } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { Generation } from "../model/generation.js";
import type { Input, InputSet } from "./inputs.js";

/** Larger files are a problem, not a read (a config file is kilobytes; a runaway one would eat memory). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** A read that takes longer (a stuck network or FUSE mount) is a problem; the rest keeps working. */
const READ_TIMEOUT_MS = 5_000;
/** A written file is taken once unchanged this long: the margin for a writer that pauses between writes. */
export const SETTLE_MS = 20;
/** A file seen changing (a writer at work, writing it piece by piece) must then stay unchanged this long. */
export const WRITER_SETTLE_MS = 40;
/** An empty file is nearly always one being rewritten (truncated, not yet written): it must stay empty this long. */
export const EMPTY_SETTLE_MS = 500;
/** A file still changing after this long is reported as such; the next check reads it again. */
const SETTLE_DEADLINE_MS = 2_000;
/** A read this soon after a file's last change is racy (git's term): a same-size rewrite can keep its timestamps; only its hash tells. */
const RACY_MS = 2_000;

/** A file's bytes as read (the loader decodes them where it parses them), with their hash; or why it cannot be read. */
export type FileRead = FileContent | { error: string };
export interface FileContent {
  bytes: Uint8Array;
  /** sha256 of the bytes (base64url). */
  hash: string;
}

export const errorCode = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);

/** Type, inode, size and timestamps: what changes when a file is written, replaced or removed; or the error stat gave. */
const statSignature = (s: Stats | Error): string =>
  s instanceof Error
    ? `error:${errorCode(s)}`
    : `${s.isFile() ? "file" : s.isDirectory() ? "dir" : "other"}:${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

/** What is at `path` now (symlinks followed), or the error stat gave. */
const statOf = (path: string): Promise<Stats | NodeJS.ErrnoException> => stat(path).catch((error: NodeJS.ErrnoException) => error);
const signatureOf = async (path: string): Promise<string> => statSignature(await statOf(path));

const hashOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("base64url");

const MIB = 1024 * 1024;
export const sizeText = (bytes: number): string => (bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`);

function kindOf(s: Stats): string {
  if (s.isFIFO()) return "a FIFO";
  if (s.isCharacterDevice()) return "a character device";
  if (s.isBlockDevice()) return "a block device";
  if (s.isSocket()) return "a socket";
  return s.isDirectory() ? "a directory" : "not a file";
}

const notRegular = (s: Stats): string => `not a regular file (${kindOf(s)}): only regular files are read`;

/** One read: `before` the signature of the fstat it was read after (the path's, if not opened), `after` the path's once read. */
type OneRead =
  | { bytes: Uint8Array; stats: Stats; statAt: number; before: string; after: string; racyUntil?: number }
  | { error: string; before: string };

async function readOnce(path: string, racyMs: number): Promise<OneRead> {
  // Not even opened when it is not a regular file (opening a device can have effects); opened
  // non-blocking, so that a FIFO swapped in after the stat cannot block the open.
  const first = await stat(path).catch(() => undefined);
  if (first && !first.isFile()) return { error: notRegular(first), before: statSignature(first) };
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { error: `cannot read file: ${errorCode(error)}`, before: await signatureOf(path) };
  }
  try {
    const statAt = Date.now();
    const stats = await handle.stat();
    const before = statSignature(stats);
    if (!stats.isFile()) return { error: notRegular(stats), before };
    if (stats.size > MAX_FILE_BYTES) return { error: `file is larger than ${sizeText(MAX_FILE_BYTES)} (${stats.size} bytes)`, before };
    const racyUntil = Math.max(stats.mtimeMs, stats.ctimeMs) + racyMs;
    const readAt = Date.now();
    const bytes = await withTimeout(readAtMost(handle, MAX_FILE_BYTES + 1, stats.size), READ_TIMEOUT_MS);
    if (bytes === undefined) return { error: `reading the file took longer than ${READ_TIMEOUT_MS / 1000} s`, before };
    if (bytes.length > MAX_FILE_BYTES) return { error: `file is larger than ${sizeText(MAX_FILE_BYTES)}`, before };
    return { bytes, stats, statAt, before, after: await signatureOf(path), ...(readAt <= racyUntil && { racyUntil }) };
  } finally {
    // Not awaited: close waits for a pending read, and a read that timed out may never end.
    void handle.close().catch(() => {});
  }
}

/** Up to `limit` bytes of the file, into a buffer sized as it was stat'ed (one byte more, to see it grow), grown when it does. */
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

/** A file's content as last read, with the signature that proves it unchanged since (unless the read was racy). */
interface KnownFile extends FileContent {
  signature: string;
  racyUntil?: number;
}

/** The files one reader (a file source) read last time, by path: one whose signature proves it unchanged is not read again. */
export class FileTexts extends Generation<string, KnownFile> {
  /** Files and bytes read from disk since this was made (a file read twice counts twice). */
  reads = 0;
  bytesRead = 0;

  /** `racyMs`: instead of RACY_MS, how long after a change a read is racy (0: never; for tests). */
  constructor(readonly racyMs = RACY_MS) {
    super();
  }

  /** The content of `path` when its signature now is the one of a read that was not racy. */
  async unchanged(path: string, inputs: InputSet | undefined): Promise<FileContent | undefined> {
    const known = this.get(path);
    if (known === undefined || known.racyUntil !== undefined || (await signatureOf(path)) !== known.signature) return undefined;
    this.set(path, known);
    inputs?.add(new FileInput(path, known.signature));
    return known;
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
 * when the stat that showed it so was asked for. ctime after mtime means the last change was not a
 * write (renamed into place, or back-dated by `cp -p`, rsync or tar): a writer still writing sets
 * both. Quiet time counts from the file's timestamps or from when we first saw it, whichever is
 * longer, so a clock ahead of ours cannot stall us.
 */
export function settleLeft(file: SettleState, checkedAt: number): number {
  if (file.size > 0 && file.metadataLast && !file.seenChanging) return 0;
  const settle = file.size === 0 ? EMPTY_SETTLE_MS : file.seenChanging ? WRITER_SETTLE_MS : SETTLE_MS;
  // An empty file's timestamps can be its last write's: a file truncated to be written again
  // (writeFileSync, seen on ext4) shows them until the new bytes come. Only what we saw counts.
  const quiet = file.size === 0 ? checkedAt - file.seenAt : Math.max(checkedAt - file.changedAt, checkedAt - file.seenAt);
  return Math.max(0, settle - quiet);
}

/**
 * A regular file's bytes once it has settled, or why they cannot be had; either way the path is
 * recorded in `inputs`. A file read before it settled is only looked at again once it has: its
 * bytes hold if its signature has not moved. With `inputs.settleLater`, that look is left to the
 * loader (InputSet.settled), which parses the bytes meanwhile.
 */
export async function readStableFile(path: string, { inputs, texts }: { inputs?: InputSet; texts?: FileTexts } = {}): Promise<FileRead> {
  const unchanged = await texts?.unchanged(path, inputs);
  if (unchanged !== undefined) return { bytes: unchanged.bytes, hash: unchanged.hash };
  if (texts) texts.reads++;
  const deadline = Date.now() + SETTLE_DEADLINE_MS;
  let seen: { signature: string; at: number } | undefined;
  let seenChanging = false;
  while (Date.now() < deadline) {
    const read = await readOnce(path, texts?.racyMs ?? RACY_MS);
    if ("error" in read) {
      inputs?.add(new FileInput(path, read.before));
      return { error: read.error };
    }
    if (texts) texts.bytesRead += read.bytes.length;
    if (read.before !== read.after) {
      seenChanging = true; // written to while we read: read it again shortly
      await sleep(SETTLE_MS / 4);
      continue;
    }
    if (seen?.signature !== read.after)
      [seenChanging, seen] = [seenChanging || seen !== undefined, { signature: read.after, at: read.statAt }];
    const { size, mtimeMs, ctimeMs } = read.stats;
    const state = { size, changedAt: Math.max(mtimeMs, ctimeMs), metadataLast: ctimeMs > mtimeMs, seenAt: seen.at, seenChanging };
    let waitMs = settleLeft(state, read.statAt);
    if (waitMs > 0 && !inputs?.settleLater) {
      await sleep(waitMs);
      if ((await signatureOf(path)) !== read.after) continue;
      waitMs = 0;
    }
    const hash = hashOf(read.bytes);
    inputs?.add(new FileInput(path, read.after, hash, read.racyUntil, waitMs > 0 ? Date.now() + waitMs : undefined));
    texts?.set(path, { bytes: read.bytes, hash, signature: read.after, racyUntil: read.racyUntil });
    return { bytes: read.bytes, hash };
  }
  inputs?.add(new FileInput(path, ""));
  return { error: `file kept changing for ${SETTLE_DEADLINE_MS / 1000} s while being read` };
}

/**
 * A file as read: changed when its signature differs; and, for a read within RACY_MS of the file's
 * last change (`racyUntil`), when its content hash differs. The first check that finds the same hash
 * once that time has passed proves it as read: a later write moves the timestamps.
 */
class FileInput implements Input {
  constructor(
    readonly id: string,
    private readonly signature: string,
    private readonly hash?: string,
    private racyUntil?: number,
    /** Read before it had settled: when it will have (see InputSet.settled). */
    readonly settleAt?: number,
  ) {}

  async moved(): Promise<boolean> {
    return (await signatureOf(this.id)) !== this.signature;
  }

  async changed(): Promise<boolean> {
    if (await this.moved()) return true;
    if (this.hash === undefined || this.racyUntil === undefined) return false;
    const hashedAt = Date.now();
    if ((await contentHashOf(this.id)) !== this.hash) return true;
    if (hashedAt > this.racyUntil) this.racyUntil = undefined;
    return false;
  }
}

/** The content hash of the file at `path`, undefined when a read would refuse it (not a regular file, over the size cap...). */
export async function contentHashOf(path: string): Promise<string | undefined> {
  const read = await readOnce(path, 0);
  return "bytes" in read ? hashOf(read.bytes) : undefined;
}

/** What `look` finds at `id` now, recorded: changed once what it finds gives another `text`. */
async function recorded<T>(id: string, inputs: InputSet | undefined, look: (id: string) => Promise<T>, text: (found: T) => string) {
  const found = await look(id);
  const seen = text(found);
  inputs?.add({ id, changed: async () => text(await look(id)) !== seen });
  return found;
}

const listOnce = (dir: string): Promise<string[] | string> => readdir(dir).then((names) => names.sort(), errorCode);

/** A directory's entry names (sorted by code unit), or the error code; recorded. */
export const listDirectory = (dir: string, inputs?: InputSet): Promise<string[] | string> =>
  recorded(dir, inputs, listOnce, (names) => (typeof names === "string" ? `error:${names}` : names.join("\0")));

/** The stats of what `path` is now (symlinks followed), or the error; recorded. */
export const statPath = (path: string, inputs?: InputSet): Promise<Stats | NodeJS.ErrnoException> =>
  recorded(path, inputs, statOf, statSignature);

/** Records a file that someone else reads (the key state file), before that read, so that any change from here on shows. */
export async function recordFile(path: string, inputs: InputSet): Promise<void> {
  const read = await readOnce(path, RACY_MS);
  inputs.add("bytes" in read ? new FileInput(path, read.before, hashOf(read.bytes), read.racyUntil) : new FileInput(path, read.before));
}
