/**
 * Parses big files off the main thread (see parseYamlOffThread): the YAML library parses a
 * document in one synchronous call, during which a running server could answer nothing. Only
 * plain data goes back. The worker keeps the last text and value of each file it parsed (a few
 * files at most), and:
 * - reads an edit of a file the fast path read where it changed (reparse.ts), not the whole text;
 * - keeps the text of a big file the serving thread parsed itself at start-up (keepInWorker),
 *   unread until its first edit comes, so that this edit too is sent back as changes;
 * - asked to parse a file again from the value the main thread holds, sends only what changed
 *   (leaveOutUnchanged), not a copy of every flag; what it sends is mostly JSON text, which the
 *   main thread parses a few hundred flags at a time.
 */
import { parentPort } from "node:worker_threads";
import { leaveOutUnchanged } from "./share.js";
import { parseChecked, tooDeep } from "./parse.js";
import { reparseEdit } from "./reparse.js";
import type { Problem } from "../model/types.js";

/** Files whose last text and value are kept. */
const KEPT_FILES = 16;

/** A text as the worker read it. */
interface Read {
  value: unknown;
  /** Read by the fast path's YAML reader: an edit of it can be read where it changed. */
  plain: boolean;
}

interface Kept {
  id: number;
  text: string;
  /** Absent for a text kept unread (keepInWorker): read when its first edit comes. */
  read?: Read;
}

/** A kept file, read. */
type Base = Read & { id: number; text: string };

const kept = new Map<string, Kept>();

parentPort?.on("message", ({ id, file, text, baseId, keep }: { id: number; file: string; text: string; baseId?: number; keep?: true }) => {
  const last = kept.get(file);
  kept.delete(file);
  // A text the serving thread parsed itself, kept unread: most big files are never edited.
  if (keep) {
    remember(file, { id, text });
    parentPort!.postMessage({ id, kept: true });
    return;
  }
  const base = last && readKept(file, last);
  const read = readText(file, text, base);
  if ("problems" in read) {
    parentPort!.postMessage({ id, problems: read.problems });
    return;
  }
  remember(file, { id, text, read: { value: read.value, plain: read.plain } });
  // Without the serving thread's value, everything is sent (as text, see share.ts's Encoded).
  const known = base !== undefined && base.id === baseId;
  const changes = leaveOutUnchanged(known ? base.value : undefined, read.value, 0, known);
  parentPort!.postMessage({ id, relative: known, changes, charsParsed: read.charsParsed });
});

function remember(file: string, entry: Kept): void {
  kept.set(file, entry);
  if (kept.size > KEPT_FILES) kept.delete(kept.keys().next().value!);
}

/** A kept file's last value (read now if it was kept unread); undefined if it cannot be read. */
function readKept(file: string, last: Kept): Base | undefined {
  if (last.read) return { id: last.id, text: last.text, ...last.read };
  const read = readText(file, last.text, undefined);
  return "problems" in read ? undefined : { id: last.id, text: last.text, value: read.value, plain: read.plain };
}

function readText(file: string, text: string, base: Base | undefined): { problems: Problem[] } | (Read & { charsParsed: number }) {
  const deep = tooDeep(file, text);
  if (deep) return { problems: deep.problems };
  const reparsed = base?.plain ? reparseEdit(base.text, base.value, text) : undefined;
  if (reparsed) return { value: reparsed.value, plain: true, charsParsed: reparsed.charsParsed };
  const parsed = parseChecked(file, text);
  if (parsed.problems.length > 0) return { problems: parsed.problems };
  // The fast path builds no Document; JSON read by it is declined by reparseEdit itself.
  return { value: parsed.value, plain: parsed.doc === undefined, charsParsed: text.length };
}
