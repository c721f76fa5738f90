/**
 * Each running server that uses the admin token kept in a state directory records itself there:
 * one file per server (`server-<pid>-<port>.json`: its URL, its process id, when it started), so
 * that two servers of one configuration (a developer's server and a test suite's fixture) never
 * clobber each other's record, and a server that stops removes its own record and no other.
 * A record outlives a server killed with SIGKILL: whoever reads one checks the process is alive,
 * and the commands send the token only to a server that proves it holds it (proof.ts). A server
 * starting removes the records of processes that are gone.
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { STATE_FILE_MODE, writeFileDurable } from "../store/durable-write.js";
import { checkStateDir, readStateFile, withStateLock } from "../store/state-dir.js";

/** A running server, as it recorded itself. */
export interface ServerRecord {
  url: string;
  pid: number;
  /** ISO time the server started listening. */
  started: string;
  /** The record's file name in the state directory. */
  name: string;
}

const RECORD_NAME = /^server-(\d+)-(\d+)\.json$/;
/** Where servers before per-server records wrote their URL: removed on sight, it names no process. */
const LEGACY_URL_FILE = "admin-url";

const recordName = (pid: number, url: string): string => {
  const { port, protocol } = new URL(url);
  return `server-${pid}-${port || (protocol === "https:" ? "443" : "80")}.json`;
};

/** Whether the process `pid` runs (on this machine: state directories are local). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // it runs, as another user
  }
}

/** The records in a state directory, oldest first; a directory or record that is not private is refused (StateDirError). */
export async function readServerRecords(stateDir: string): Promise<ServerRecord[]> {
  if (!(await checkStateDir(stateDir))) return [];
  const names = (await readdir(stateDir)).filter((name) => RECORD_NAME.test(name));
  const records: ServerRecord[] = [];
  for (const name of names) {
    const text = await readStateFile(stateDir, name);
    if (text === undefined) continue; // removed meanwhile
    const record = parseRecord(text, name);
    if (record) records.push(record);
  }
  return records.sort((a, b) => (a.started < b.started ? -1 : a.started > b.started ? 1 : 0));
}

function parseRecord(text: string, name: string): ServerRecord | undefined {
  try {
    const { url, pid, started } = JSON.parse(text) as Partial<ServerRecord>;
    if (typeof url !== "string" || typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) return undefined;
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
    return { url: parsed.origin, pid, started: typeof started === "string" ? started : "", name };
  } catch {
    return undefined; // not a record: ignored, as a file of someone else's making would be
  }
}

/**
 * Records this server (its URL) in the state directory, and removes the records of servers whose
 * process is gone (and the single `admin-url` older versions wrote). Returns the record's name,
 * for forgetServer.
 */
export async function recordServer(stateDir: string, url: string, pid: number = process.pid): Promise<string> {
  const name = recordName(pid, url);
  await withStateLock(stateDir, async () => {
    for (const record of await readServerRecords(stateDir)) {
      if (record.name !== name && !isRunning(record.pid)) await rm(join(stateDir, record.name), { force: true });
    }
    await rm(join(stateDir, LEGACY_URL_FILE), { force: true });
    const text = `${JSON.stringify({ url, pid, started: new Date().toISOString() })}\n`;
    await writeFileDurable(join(stateDir, name), text, { mode: STATE_FILE_MODE });
  });
  return name;
}

/** Removes this server's own record (never another's) when it stops. */
export async function forgetServer(stateDir: string, name: string): Promise<void> {
  await withStateLock(stateDir, () => rm(join(stateDir, name), { force: true }));
}
