/**
 * Parses the files a running server reads again off its main thread (see parseYamlOffThread):
 * the YAML library parses a document in one synchronous call, during which the server could
 * answer nothing. Only plain data goes back. A file comes as its bytes, decoded here, so the
 * serving thread does not decode it either. The worker keeps the last text and value of each file
 * it parsed (a few files at most), and:
 * - reads an edit of a file the fast path read where it changed (reparse.ts), not the whole text;
 * - sends back only what changed from the value the server holds (leaveOutUnchanged), not a copy
 *   of every flag: the value of a parse it made (named by its id), or that of a text the server
 *   parsed itself (at start-up), which it reads first. What it sends is mostly JSON text, which
 *   the main thread parses a few hundred flags at a time.
 */
import { parentPort } from "node:worker_threads";
import { leaveOutUnchanged } from "./share.js";
import { parseChecked, tooDeep, type WorkerBase, type WorkerRequest } from "./parse.js";
import { decodeUtf8 } from "../sources/decode.js";
import { reparseEdit } from "./reparse.js";
import { MAX_DEPTH, textNestingDepth } from "./shape.js";
import type { Problem } from "../model/types.js";

/** Files whose last text and value are kept. */
const KEPT_FILES = 16;

/** A text as the worker read it. */
interface Read {
  value: unknown;
  /** Read by the fast path's YAML reader: an edit of it can be read where it changed. */
  plain: boolean;
  /** At least as deep as the text nests its brackets (shape.ts's textNestingDepth). */
  nesting: number;
}

type Kept = Read & { id: number; text: string };

const kept = new Map<string, Kept>();

parentPort?.on("message", (request: WorkerRequest) => {
  const { id, file, base } = request;
  // A file's bytes are decoded here; bytes that are not UTF-8 send the server to parse (and report) them itself.
  const decoded = "text" in request ? request : decodeUtf8(request.bytes);
  if (!("text" in decoded)) {
    parentPort!.postMessage({ id, problems: [{ file, line: decoded.line, col: decoded.col, message: decoded.error }] });
    return;
  }
  const { text } = decoded;
  const { last, charsParsed } = baseOf(file, base);
  const read = readText(file, text, last);
  if ("problems" in read) {
    parentPort!.postMessage({ id, problems: read.problems });
    return;
  }
  kept.set(file, { id, text, value: read.value, plain: read.plain, nesting: read.nesting });
  if (kept.size > KEPT_FILES) kept.delete(kept.keys().next().value!);
  // Without the server's value, everything is sent (as text, see share.ts's Encoded).
  const changes = leaveOutUnchanged(last?.value, read.value, 0, last !== undefined);
  parentPort!.postMessage({ id, relative: last !== undefined, changes, charsParsed: charsParsed + read.charsParsed });
});

/**
 * The value the server holds of `file`, as the worker has it or reads it now (with the characters
 * that took); no `last` when the worker has not got it.
 */
function baseOf(file: string, base: WorkerBase | undefined): { last?: Kept; charsParsed: number } {
  const mine = kept.get(file);
  kept.delete(file);
  if (base === undefined) return { charsParsed: 0 };
  if ("id" in base) return mine?.id === base.id ? { last: mine, charsParsed: 0 } : { charsParsed: 0 };
  // A text the server parsed itself (at start-up): read here first, as the server did.
  const read = readText(file, base.text, undefined);
  if ("problems" in read) return { charsParsed: base.text.length };
  return { last: { id: 0, text: base.text, value: read.value, plain: read.plain, nesting: read.nesting }, charsParsed: read.charsParsed };
}

function readText(file: string, text: string, base: Kept | undefined): { problems: Problem[] } | (Read & { charsParsed: number }) {
  // An edit that cannot nest the text too deep (its brackets counted) is read where it changed
  // without the whole text being scanned for nesting.
  const reparsed = base?.plain ? reparseEdit(base.text, base.value, text, MAX_DEPTH - base.nesting) : undefined;
  if (reparsed)
    return { value: reparsed.value, plain: true, nesting: base!.nesting + reparsed.nestingGrowth, charsParsed: reparsed.charsParsed };
  const nesting = textNestingDepth(text);
  const deep = nesting > MAX_DEPTH ? tooDeep(file, text) : undefined;
  if (deep) return { problems: deep.problems };
  const parsed = parseChecked(file, text);
  if (parsed.problems.length > 0) return { problems: parsed.problems };
  // The fast path builds no Document; JSON read by it is declined by reparseEdit itself.
  return { value: parsed.value, plain: parsed.doc === undefined, nesting, charsParsed: text.length };
}
