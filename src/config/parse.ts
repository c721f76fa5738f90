/**
 * Text -> plain value, with positions found when a problem needs one. A plain, well-formed file
 * is read by the fast path (fast-parse.ts) and its positions come from a Document built only
 * when one is asked for; everything else is read by the `yaml` package, with positions. JSON is
 * read as YAML (it is YAML 1.2), so both formats get the same line:col errors.
 */
import type { Document, Node, Scalar } from "yaml";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { fastParse } from "./fast-parse.js";
import { yaml } from "./yaml-package.js";
import { inlineSource, yamlSource, type Source } from "./positions.js";
import { explainYamlErrors } from "./yaml-errors.js";
import { decodeUtf8 } from "../sources/decode.js";
import { hashOf } from "../sources/files.js";
import { runSteps, runStepsYielding, turnIfDue, type Steps } from "../model/steps.js";
import { withUnchanged, type Encoded } from "./share.js";
import { textNestingProblem } from "./shape.js";
import type { Problem } from "../model/types.js";

export interface ParsedFile {
  /** Absent when the file could not be read. */
  source?: Source;
  /** The YAML document, even a broken one (to tell what it was meant to be). */
  doc?: Document;
  /** The document as plain JSON-like data; undefined when the file has problems. */
  value?: unknown;
  problems: Problem[];
  /** Parsed in the parse worker, which keeps this value under this id (see parseYamlOffThread). */
  workerId?: number;
  /** The value whose unchanged parts `value` shares already (the worker sent only what changed from it), as shareUnchanged would. */
  sharedWith?: unknown;
  /** How much of the text a YAML reader was given, when not all of it (the worker read an edit where it changed, reparse.ts). */
  charsParsed?: number;
}

/** yaml's own default; counts alias expansions, so "billion laughs" files fail fast. */
const MAX_ALIAS_COUNT = 100;

export function parseYaml(file: string, text: string): ParsedFile {
  return tooDeep(file, text) ?? parseChecked(file, text);
}

/** parseYaml for a text `tooDeep` has passed. */
export const parseChecked = (file: string, text: string): ParsedFile => parseFast(file, text) ?? parseWithPositions(file, text);

/** A text nested too deep for the parsers' recursion is a problem before it is parsed (shape.ts). */
export function tooDeep(file: string, text: string): ParsedFile | undefined {
  const problem = textNestingProblem(text);
  return problem && { problems: [{ file, ...problem }] };
}

/** The `yaml` path alone: the Document, with every node's position, then its value. */
export const parseWithPositions = (file: string, text: string): ParsedFile => runSteps(parseYamlSteps(file, text));

/** The fast path's value, with a source that builds the Document on the first position asked. */
function parseFast(file: string, text: string): ParsedFile | undefined {
  const value = fastParse(withoutBom(text));
  return value === undefined ? undefined : { source: lazySource(file, { text }), value, problems: [] };
}

// Editors show columns without the BOM; so must we.
const withoutBom = (text: string): string => (text.startsWith("\uFEFF") ? text.slice(1) : text);

/** parseYaml that lets the event loop run between the `yaml` path's steps. */
export const parseYamlYielding = async (file: string, text: string): Promise<ParsedFile> =>
  tooDeep(file, text) ?? parseFast(file, text) ?? runStepsYielding(parseYamlSteps(file, text));

/** A file this big waits for the worker to start; a smaller one is parsed here until it runs. */
const WAITS_FOR_WORKER_BYTES = 512 * 1024;

/**
 * parseYaml for a running server: the file is parsed in a worker thread, so requests keep being
 * answered meanwhile (even a small file's parse holds a thread 5 to 20 ms the first times it
 * runs, before the reader's code is optimized). The worker starts with the first edit; a small
 * file edited before it runs is parsed here rather than wait about 100 ms for it. Positions are
 * only needed when a later check finds a problem; the source then parses the text again on this
 * thread, once. A file with YAML problems, or one read while the worker cannot run (from the
 * TypeScript sources), is parsed here.
 *
 * `last` is this file's last parse and its text: the worker reads the new text from it (it keeps
 * the last text and value of the files it parsed; one parsed here, at start-up, is sent along),
 * where it changed, and sends back only what changed (withUnchanged), so that an edit of one flag
 * in a big file costs this thread that flag, not a copy of the whole value. Whatever it sends is
 * read here in steps, flag by flag from JSON text (share.ts's Encoded).
 */
export async function parseYamlOffThread(file: string, content: Content, last?: KnownParse): Promise<ParsedFile> {
  if (inWorker("text" in content ? content.text.length : content.bytes.length)) {
    const value = last?.parsed.value;
    const base = value === undefined ? undefined : workerBase(last!);
    await turnIfDue(); // the file was just read and hashed in this task
    const reply = await parseWorker.parse(file, content, base).catch(() => undefined);
    // The worker checked the nesting and the fast path declined the file (or its bytes are not
    // UTF-8): the `yaml` path says where it is wrong.
    if (reply && "problems" in reply)
      return parseDecoded(file, content, (text) => tooDeep(file, text) ?? runStepsYielding(parseYamlSteps(file, text)));
    if (reply) {
      const read = await runStepsYielding(withUnchanged(reply.relative ? value : undefined, reply.changes));
      const parsed: ParsedFile = {
        source: lazySource(file, content),
        value: read,
        problems: [],
        workerId: reply.id,
        charsParsed: reply.charsParsed,
      };
      return reply.relative ? { ...parsed, sharedWith: value } : parsed;
    }
  }
  return parseDecoded(file, content, (text) => parseYamlYielding(file, text));
}

/**
 * What a document gives to parse: its text, or a file's bytes as read (decoded where they are
 * parsed: in the worker for an edit) with their hash.
 */
export type Content = { text: string } | { bytes: Uint8Array; hash: string };

/** A parse kept for the next load (memo.ts): what it was parsed from, and its text when that was decoded on this thread. */
export interface KnownParse {
  /** Of a file's bytes. */
  hash?: string;
  /** The text parsed here (the worker reads an edit from it), or the text a document gave. */
  text?: string;
  parsed: ParsedFile;
}

/**
 * What the worker is told the server holds of a file: the worker's own parse, or the text parsed
 * here (which it reads first); nothing when the text is not kept (then everything is sent back).
 */
function workerBase(last: KnownParse): WorkerBase | undefined {
  if (last.parsed.workerId !== undefined) return { id: last.parsed.workerId };
  return last.text === undefined ? undefined : { text: last.text };
}

/** Whether `content` is what `known` was parsed from. */
export const sameContent = (known: KnownParse, content: Content): boolean =>
  "bytes" in content ? known.hash === content.hash : known.text === content.text;

/** The text of `content`, decoded if it is bytes; a problem at the first byte that is not UTF-8. */
export function textOf(file: string, content: Content): { text: string } | { problem: Problem } {
  if ("text" in content) return content;
  const decoded = decodeUtf8(content.bytes);
  return "text" in decoded ? decoded : { problem: { file, line: decoded.line, col: decoded.col, message: decoded.error } };
}

/** `content` decoded here, then parsed by `parse`. */
async function parseDecoded(
  file: string,
  content: Content,
  parse: (text: string) => ParsedFile | Promise<ParsedFile>,
): Promise<ParsedFile> {
  const read = textOf(file, content);
  if ("problem" in read) return { problems: [read.problem] };
  return { ...(await parse(read.text)), charsParsed: read.text.length };
}

/**
 * Starts the parse worker ahead of the first edit (a running server, once it has answered and
 * warmed up): a small file's first edit is then parsed off the serving thread too, instead of
 * holding it 5 to 35 ms while its parser's code runs for the first time. Costs the worker's
 * memory (about 10 MB of RSS, bench:startup) whether or not a file is ever edited.
 */
export function startParseWorker(): void {
  if (parseWorker.available) parseWorker.start();
}

/** Whether the parse worker runs (for the tests: a server starts it once serving). */
export const parseWorkerRunning = (): boolean => parseWorker.running;

/** Whether to parse in the worker (`size`: of the text or bytes): when it runs, or a big file (which waits for it); a small file starts it for the next edit. */
function inWorker(size: number): boolean {
  if (!parseWorker.available) return false;
  if (parseWorker.running || size >= WAITS_FOR_WORKER_BYTES) return true;
  parseWorker.start();
  return false;
}

/** `relative`: the changes are from the value the server holds (the `base` the request named); else everything is sent. */
type WorkerReply =
  { id: number; relative: boolean; changes: Encoded | undefined; charsParsed: number } | { id: number; problems: Problem[] };

/** What the server holds of a file: the worker's parse of that id, or the value of that text. */
export type WorkerBase = { id: number } | { text: string };

/** A parse asked of the worker: a text, or a file's bytes (copied: the file source keeps them), which it decodes. */
export type WorkerRequest = { id: number; file: string; base?: WorkerBase } & ({ text: string } | { bytes: Uint8Array });

const WORKER_SCRIPT = new URL("./parse-worker.js", import.meta.url);

/**
 * One worker thread for every parse while serving, started by the first edit, kept while the
 * process runs (it does not keep the process alive when idle). If it fails, the next parse starts
 * another.
 */
class ParseWorker {
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve(reply: WorkerReply): void; reject(error: Error): void }>();

  parse(file: string, content: Content, base: WorkerBase | undefined): Promise<WorkerReply> {
    const worker = this.start();
    const id = this.#nextId++;
    const request: WorkerRequest = "text" in content ? { id, file, text: content.text, base } : { id, file, bytes: content.bytes, base };
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage(request);
    });
  }

  /** The worker's script is there to run: not when running from the TypeScript sources (tests). */
  readonly available = existsSync(fileURLToPath(WORKER_SCRIPT));

  /** Started (and not failed since). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** The worker, started (in the background) if it was not running. */
  start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER_SCRIPT);
    const failed = (error: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const { reject } of this.#pending.values()) reject(error);
      this.#pending.clear();
    };
    worker.on("message", (reply: WorkerReply) => {
      this.#pending.get(reply.id)?.resolve(reply);
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
    });
    worker.once("error", failed);
    worker.once("exit", (code) => failed(new Error(`parse worker exited with ${code}`)));
    worker.unref();
    return (this.#worker = worker);
  }
}

const parseWorker = new ParseWorker();

/**
 * A source that parses its text with positions (on this thread, decoding it first if need be) the
 * first time one is asked for. A file's bytes are lent until the file source's read after next
 * (FileTexts reuses the buffer): bytes that no longer hash as they were read give no positions,
 * never wrong ones.
 */
export function lazySource(file: string, content: Content): Source {
  let parsed: Source | undefined;
  const withPositions = (): Source => {
    if ("bytes" in content && hashOf(content.bytes) !== content.hash) return inlineSource(file);
    const read = textOf(file, content);
    return ("text" in read ? parseWithPositions(file, read.text).source : undefined) ?? inlineSource(file);
  };
  return { file, positional: true, locate: (path, anchor) => (parsed ??= withPositions()).locate(path, anchor) };
}

/** parseYaml in steps (parse, check, convert), for a file read while serving. */
export function* parseYamlSteps(file: string, text: string): Steps<ParsedFile> {
  const src = withoutBom(text);
  const { LineCounter, isScalar, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(src, {
    lineCounter,
    prettyErrors: false,
    // yaml's own check compares each key with every earlier one (quadratic: minutes for 100 000
    // flags); duplicateKeys does the same check with a set per mapping.
    uniqueKeys: false,
    // flagd's Go YAML reader supports `<<: *defaults`; flagd files must load unchanged.
    merge: true,
  });
  const source = yamlSource(file, doc, lineCounter);
  yield;
  const at = (offset: number, message: string): Problem => ({ file, ...lineCounter.linePos(offset), message });

  // Warnings too (unresolved tags...): a value we could not read as written is an error here.
  const yamlProblems: Problem[] = explainYamlErrors(src, doc.errors, doc.warnings, (offset) => lineCounter.linePos(offset)).map((p) => ({
    file,
    ...p,
  }));
  if (yamlProblems.length === 0)
    yamlProblems.push(...duplicateKeys(doc).map((key) => at(key.range?.[0] ?? 0, `duplicate key '${String(key.value)}'`)));
  if (yamlProblems.length > 0) return { source, doc, problems: yamlProblems };

  // A half-written file (truncated to nothing, or only its comment header) must never load as "no flags".
  const c = doc.contents;
  if (c === null || (isScalar(c) && c.value === null && c.range?.[0] === c.range?.[1])) {
    return { source, doc, problems: [{ file, line: 1, col: 1, message: "file is empty" }] };
  }
  const cycle = src.includes("*") ? recursiveAlias(doc) : undefined; // no `*`, no alias
  yield;
  if (cycle) return { source, doc, problems: [at(cycle.range?.[0] ?? 0, "YAML alias refers to a node that contains it")] };
  try {
    return { source, doc, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), problems: [] };
  } catch (error) {
    return { source, doc, problems: [{ file, line: 1, col: 1, message: `cannot read YAML: ${(error as Error).message}` }] };
  }
}

/** The second and later occurrences of a scalar key in the same mapping (YAML forbids them). */
function duplicateKeys(doc: Document): Scalar[] {
  const found: Scalar[] = [];
  const { isMap, isScalar, isSeq } = yaml();
  // A plain walk: yaml's `visit` builds a path for every node, which costs more than the check.
  const walk = (node: unknown): void => {
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          if (seen.has(pair.key.value)) found.push(pair.key);
          else seen.add(pair.key.value);
        }
        walk(pair.value);
      }
    } else if (isSeq(node)) for (const item of node.items) walk(item);
  };
  walk(doc.contents);
  return found;
}

/** `a: &x [*x]` would give a cyclic value, which no later stage (or JSON) can handle. */
function recursiveAlias(doc: Document): Node | undefined {
  let found: Node | undefined;
  const { isPair, visit } = yaml();
  visit(doc, {
    Alias(_, alias, path) {
      const target = alias.resolve(doc);
      if (target && path.some((ancestor) => ancestor === target || (isPair(ancestor) && ancestor.value === target))) {
        found = alias;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}
