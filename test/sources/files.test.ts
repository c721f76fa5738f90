/**
 * The settle rule of the file reader: when a file read whole is taken, and that a file written in
 * two halves is never taken half-written. Real files; the second half is written synchronously from
 * a timer due well before the reader's own (file timestamps are coarse: a few ms), so the order
 * does not depend on the machine's load.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, futimesSync, openSync, readFileSync, renameSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  contentHashOf,
  EMPTY_SETTLE_MS,
  FileTexts,
  MAX_FILE_BYTES,
  readStableFile,
  SETTLE_MS,
  settleLeft,
  WRITER_SETTLE_MS,
  type SettleState,
} from "../../src/sources/files.js";
import { InputSet } from "../../src/sources/inputs.js";
import { tempDir, type TempDir } from "../helpers/files.js";

let dir: TempDir;
afterEach(() => dir?.remove());

const NOW = 1_800_000_000_000;
const file = (state: Partial<SettleState>): SettleState => ({
  size: 100,
  changedAt: NOW,
  metadataLast: false,
  seenAt: NOW,
  seenChanging: false,
  ...state,
});

describe("settleLeft", () => {
  it("a file just written waits the settle window, counted from its timestamps or from when it was first seen", () => {
    expect(settleLeft(file({}), NOW)).toBe(SETTLE_MS);
    expect(settleLeft(file({ changedAt: NOW - 5 }), NOW)).toBe(SETTLE_MS - 5);
    expect(settleLeft(file({ changedAt: NOW - SETTLE_MS }), NOW)).toBe(0);
    // A timestamp ahead of our clock (another machine's) cannot stall it: what we saw counts.
    expect(settleLeft(file({ changedAt: NOW + 60_000, seenAt: NOW - SETTLE_MS }), NOW)).toBe(0);
  });

  it("an empty file, and one seen changing (a writer that pauses), wait longer", () => {
    expect(settleLeft(file({ size: 0, seenAt: NOW - SETTLE_MS }), NOW)).toBe(EMPTY_SETTLE_MS - SETTLE_MS);
    // An empty file's timestamps can be those of its last write (truncated to be written again):
    // only how long this reader has seen it empty counts.
    expect(settleLeft(file({ size: 0, changedAt: NOW - 10_000 }), NOW)).toBe(EMPTY_SETTLE_MS);
    expect(settleLeft(file({ seenChanging: true, changedAt: NOW - SETTLE_MS }), NOW)).toBe(WRITER_SETTLE_MS - SETTLE_MS);
    expect(settleLeft(file({ seenChanging: true, changedAt: NOW - WRITER_SETTLE_MS }), NOW)).toBe(0);
  });

  it("ctime after mtime (renamed into place, or back-dated after writing) is taken at once, unless empty or seen changing", () => {
    expect(settleLeft(file({ metadataLast: true }), NOW)).toBe(0);
    expect(settleLeft(file({ metadataLast: true, size: 0 }), NOW)).toBe(EMPTY_SETTLE_MS);
    expect(settleLeft(file({ metadataLast: true, seenChanging: true }), NOW)).toBe(WRITER_SETTLE_MS);
  });
});

const FULL =
  "apiKey: k\nflags:\n  a:\n    variants: { v: 1 }\n    defaultVariant: v\n  b:\n    variants: { v: 2 }\n    defaultVariant: v\n";
const HALF = FULL.slice(0, FULL.indexOf("  b:")); // valid YAML too: flag b missing

/** What readStableFile gives for a file of this text: its bytes, not decoded, and their sha256. */
const content = (text: string) => ({
  bytes: Buffer.from(text),
  hash: createHash("sha256").update(text).digest("base64url"),
});

describe("readStableFile", () => {
  it.each([1, SETTLE_MS / 2])("a file written in two halves %i ms apart is read whole, never as its first half", async (gap) => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("dev.yaml", "old: true\n");
    for (let round = 0; round < 5; round++) {
      const fd = openSync(path, "w");
      writeSync(fd, HALF);
      // Its mtime ahead of our clock: however long this machine takes before the timer below is
      // set, the half has not settled when read (the window counts from when the read first sees it).
      futimesSync(fd, new Date(), new Date(Date.now() + 60_000));
      const second = new Promise<void>((resolve) =>
        setTimeout(() => {
          writeSync(fd, FULL.slice(HALF.length));
          closeSync(fd);
          resolve();
        }, gap),
      );
      const read = readStableFile(path);
      await second;
      expect(await read).toEqual(content(FULL));
    }
  });

  it("a file just written is read once, when it has settled: its bytes are not read before", async () => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("dev.yaml", "old: true\n");
    const texts = new FileTexts();
    for (let round = 0; round < 3; round++) {
      const text = FULL.repeat(round + 1);
      writeFileSync(path, text);
      expect(await readStableFile(path, { texts })).toEqual(content(text));
      texts.end();
    }
    expect(texts.reads).toBe(3);
    expect(texts.bytesRead).toBe(FULL.length * (1 + 2 + 3));
  });

  it("for a reload that parses while files settle: taken at once, and kept only if still as read once settled", async () => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("dev.yaml", "old: true\n");
    const fd = openSync(path, "w");
    writeSync(fd, HALF); // a writer that pauses halfway
    // Its mtime ahead of our clock: however long this machine takes to reach the read, the file
    // has not settled by then (the window counts from when the read first sees it).
    futimesSync(fd, new Date(), new Date(Date.now() + 60_000));
    const inputs = new InputSet(true);
    expect(await readStableFile(path, { inputs })).toEqual(content(HALF));
    writeSync(fd, FULL.slice(HALF.length)); // resumes within the settle window
    closeSync(fd);
    expect(await inputs.settled()).toBe(false); // so the half read is not used
    // Read again: this time it stays as read.
    const again = new InputSet(true);
    expect(await readStableFile(path, { inputs: again })).toEqual(content(FULL));
    expect(await again.settled()).toBe(true);
    // Without settleLater the read waits for the window itself and leaves nothing to settle: a
    // later change is the reloader's periodic check's to see.
    writeFileSync(path, HALF);
    const waited = new InputSet();
    expect(await readStableFile(path, { inputs: waited })).toEqual(content(HALF));
    writeFileSync(path, FULL);
    expect(await waited.settled()).toBe(true);
    expect(await waited.changed()).toBe(path);
  });

  it("a file renamed into place is read whole, and recorded so that a later change shows", async () => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("dev.yaml", "old: true\n");
    writeFileSync(`${path}.tmp`, FULL);
    renameSync(`${path}.tmp`, path);
    const inputs = new InputSet();
    expect(await readStableFile(path, { inputs })).toEqual(content(FULL));
    expect(await inputs.changed()).toBeUndefined();
    writeFileSync(path, HALF);
    expect(await inputs.changed()).toBe(path);
  });

  it("a file back-dated after writing (cp -p, rsync, tar) is read as written", async () => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("dev.yaml", FULL);
    utimesSync(path, new Date(), new Date(Date.now() - 3_600_000));
    expect(await readStableFile(path)).toEqual(content(FULL));
  });
});

describe("contentHashOf (the periodic check's hash of a recently changed file)", () => {
  it("is the hash of the bytes a read gives, for a file read in many chunks", async () => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("big.yaml", `flags:\n${"  # a comment line of some length to fill the file\n".repeat(6_000)}`);
    expect(readFileSync(path).length).toBeGreaterThan(4 * 64 * 1024);
    const hash = (bytes: Buffer) => createHash("sha256").update(bytes).digest("base64url");
    expect(await contentHashOf(path)).toBe(hash(readFileSync(path)));
    writeFileSync(path, readFileSync(path, "utf8").replace("comment", "Comment"));
    expect(await contentHashOf(path)).toBe(hash(readFileSync(path)));
  });

  it("has no hash for what a read would refuse: a directory, a FIFO, a file over the size cap, nothing", async () => {
    dir = await tempDir("flagserve-files-");
    execFileSync("mkfifo", [`${dir.path}/fifo.yaml`]);
    const big = await dir.write("big.yaml", "");
    writeFileSync(big, Buffer.alloc(MAX_FILE_BYTES + 1, 0x20));
    for (const path of [dir.path, `${dir.path}/fifo.yaml`, big, `${dir.path}/missing.yaml`])
      expect(await contentHashOf(path)).toBeUndefined();
  });
});

describe("racy reads (a read so soon after a change that timestamps could hide a rewrite)", () => {
  it("a text read soon after its change is read again; one read after the window is trusted by its stat", async () => {
    dir = await tempDir("flagserve-files-");
    const path = await dir.write("dev.yaml", FULL);
    const texts = new FileTexts(60_000); // every read within a minute of a change is racy
    for (let i = 0; i < 3; i++) {
      expect(await readStableFile(path, { texts })).toEqual(content(FULL));
      texts.end();
    }
    expect(texts.reads).toBe(3);

    const trusting = new FileTexts(50);
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 3; i++) {
      expect(await readStableFile(path, { texts: trusting })).toEqual(content(FULL));
      trusting.end();
    }
    expect(trusting.reads).toBe(1);
  });
});
