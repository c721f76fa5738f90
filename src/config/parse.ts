/**
 * Text -> plain value. js-yaml reads every document (JSON is YAML 1.2, so both formats get the
 * same errors); the `yaml` package, which keeps every node's position, is loaded only to say where
 * a problem is: a syntax error, or a problem a later check finds (`lazySource`).
 */
import jsYaml, { CORE_SCHEMA, load, YAMLException, type Type, type TypeConstructorOptions } from "js-yaml";
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { CST, Document, LineCounter, Node, Scalar } from "yaml";
import { decodeUtf8 } from "../sources/decode.js";
import type { JsonPath, Problem } from "../model/types.js";
import { textNestingProblem, valueShapeProblem } from "./nesting.js";
import { inlineSource, yamlSource, type Anchor, type Source } from "./positions.js";
import { explainYamlErrors } from "./yaml-errors.js";
import { yaml } from "./yaml-package.js";

export interface ParsedFile {
  /** Absent when the file could not be read. */
  source?: Source;
  /** The document as plain JSON-like data; undefined when the file has problems. */
  value?: unknown;
  problems: Problem[];
  /** A document that could not be read is an `environments:` mapping (its problems belong to no one environment). */
  multiEnvironment?: boolean;
  /** From the parse worker: `value` has each flag and segment as `{}`, and these are their JSON texts (memo.ts). */
  entryTexts?: readonly string[];
}

/** js-yaml's types as built (`types`, and a type's `tag` and `options`, are missing from @types/js-yaml). */
type BuiltType = Type & { tag: string; options: TypeConstructorOptions };
const { types } = jsYaml as unknown as { types: Record<"int" | "float" | "merge", BuiltType> };

/** Set by js-yaml's own number types when a read meets one JSON cannot carry (`.inf`, `.nan`, an integer past 1e308). */
let nonFiniteRead = false;
const noteNonFinite = (type: BuiltType): Type =>
  new jsYaml.Type(type.tag, {
    ...type.options,
    construct(data: string) {
      const n = type.construct(data) as number;
      if (!Number.isFinite(n)) nonFiniteRead = true;
      return n;
    },
  });

/**
 * YAML 1.2's core schema (null, booleans, numbers, strings: no timestamps or binary, which have
 * no JSON form) and merge keys, as flagd's own reader supports `<<: *defaults`.
 */
const SCHEMA = CORE_SCHEMA.extend({ implicit: [types.merge, noteNonFinite(types.int), noteNonFinite(types.float)] });

/** A file's text -> its value, or its problems, each at file:line:col. */
export const parseYaml = (file: string, text: string): ParsedFile => parseContent(file, { text });

/** parseYaml of a document's content, decoded if it is bytes. */
export function parseContent(file: string, content: Content): ParsedFile {
  const read = readContent(file, content);
  return "value" in read ? { source: lazySource(file, content), value: read.value, problems: [] } : read;
}

/** readYaml of a document's content; a problem at the first byte that is not UTF-8. */
export function readContent(file: string, content: Content): YamlRead {
  const decoded = textOf(file, content);
  return "text" in decoded ? readYaml(file, decoded.text) : { problems: [decoded.problem] };
}

/** What reading a text gives, without a Source: what the parse worker sends back. `nonFinite`: the value holds `.inf` or the like. */
export type YamlRead = { value: unknown; nonFinite?: true } | { problems: Problem[]; multiEnvironment?: boolean };

/**
 * Reads `text` with js-yaml, once it is known to nest no deeper than the parsers can recurse. A
 * syntax error is located and explained by the `yaml` package; an empty text, or nothing but
 * comments (a file truncated before it is written again), is a problem, never "no flags".
 */
export function readYaml(file: string, text: string): YamlRead {
  const src = withoutBom(text);
  const deep = textNestingProblem(src);
  if (deep) return { problems: [{ file, ...deep }] };
  let value: unknown;
  nonFiniteRead = false;
  try {
    value = load(src, { schema: SCHEMA });
  } catch (error) {
    return yamlProblems(file, src, jsYamlProblem(file, error));
  }
  if (value === undefined || value === null) return { problems: [{ file, line: 1, col: 1, message: "file is empty" }] };
  // Aliases share nodes: a value can nest deeper (an alias inside the node it names: without
  // end), or be far larger, than its text.
  const shape = src.includes("*") ? valueShapeProblem(value, src.length) : undefined;
  if (shape) return yamlProblems(file, src, { file, line: 1, col: 1, message: shape });
  return nonFiniteRead ? { value, nonFinite: true } : { value };
}

/** Data given as values, as their JSON text -> a private copy (later changes to the caller's object cannot reach a snapshot). */
export function parseData(file: string, json: string): ParsedFile {
  const value: unknown = JSON.parse(json);
  const shape = valueShapeProblem(value, json.length);
  return shape ? { problems: [{ file, line: 0, col: 0, message: shape }] } : { source: inlineSource(file), value, problems: [] };
}

// Editors show columns without the BOM; so must we.
const withoutBom = (text: string): string => (text.startsWith("\uFEFF") ? text.slice(1) : text);

/** What a document gives to parse: its text, or a file's bytes (decoded where they are parsed: in the worker while serving). */
export type Content = { text: string } | { bytes: Uint8Array };
export const contentLength = (content: Content): number => ("text" in content ? content.text.length : content.bytes.length);

/** The text of `content`, decoded if it is bytes; a problem at the first byte that is not UTF-8. */
function textOf(file: string, content: Content): { text: string } | { problem: Problem } {
  if ("text" in content) return content;
  const decoded = decodeUtf8(content.bytes);
  return "text" in decoded ? decoded : { problem: { file, line: decoded.line, col: decoded.col, message: decoded.error } };
}

/**
 * parseYaml in the parse worker: js-yaml reads a file of the budget's size in one synchronous call,
 * longer than a request should wait. Here when the worker cannot run (from the TypeScript sources) or failed.
 */
export async function parseOffThread(file: string, content: Content): Promise<ParsedFile> {
  const read = WORKER_AVAILABLE ? await askWorker(file, content).catch(() => undefined) : undefined;
  if (read === undefined || "positions" in read) return parseContent(file, content);
  if ("problems" in read) return { problems: read.problems, multiEnvironment: read.multiEnvironment };
  const source = lazySource(file, content, true);
  if ("value" in read) return { source, value: read.value, problems: [] };
  return { source, value: JSON.parse(read.skeleton) as unknown, problems: [], entryTexts: read.entryTexts };
}

export const parseWorkerRunning = (): boolean => worker !== undefined;

/** A document to read, or (`places`) to find these places in. */
export interface WorkerRequest {
  id: number;
  file: string;
  content: Content;
  places?: Place[];
}
type Place = [path: JsonPath, anchor: Anchor];

/** What the worker answers: the request's id and what reading gave, with the value's entries' texts; or the places' positions. */
export type WorkerReply = { id: number } & (
  | { value: unknown }
  | { skeleton: string; entryTexts: readonly string[] }
  | { problems: Problem[]; multiEnvironment?: boolean }
  | { positions: { line: number; col: number }[] }
);

const WORKER_SCRIPT = new URL("./parse-worker.js", import.meta.url);

// Not there when running from the TypeScript sources (tests).
const WORKER_AVAILABLE = existsSync(WORKER_SCRIPT);

// One worker thread for every parse while serving, kept while the process runs (it does not keep
// the process alive when idle); if it fails, the next parse starts another.
let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve(reply: WorkerReply): void; reject(error: Error): void }>();

// Async: a worker that cannot even be made rejects, and the caller reads the file on this thread.
async function askWorker(file: string, content: Content, places?: Place[]): Promise<WorkerReply> {
  const running = runningWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    running.ref();
    running.postMessage({ id, file, content, places } satisfies WorkerRequest);
  });
}

function runningWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(WORKER_SCRIPT);
  const failed = (error: Error) => {
    if (worker === started) worker = undefined;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  started.on("message", (reply: WorkerReply) => {
    pending.get(reply.id)?.resolve(reply);
    pending.delete(reply.id);
    if (pending.size === 0) started.unref();
  });
  started.once("error", failed);
  started.once("exit", (code) => failed(new Error(`parse worker exited with ${code}`)));
  started.unref();
  return (worker = started);
}

/**
 * A source that parses the text with positions the first time one is asked for: most files never
 * have a problem to locate. For a watching server (`offThread`), its problems are placed by the
 * parse worker: that parse holds a thread up far longer than js-yaml's.
 */
function lazySource(file: string, content: Content, offThread = false): Source {
  let parsed: Source | undefined;
  const locate: Source["locate"] = (path, anchor) => (parsed ??= positionsOf(file, content)).locate(path, anchor);
  if (!offThread) return { file, positional: true, locate };
  // Positions by place, kept for the loads to come: a file left broken is checked again with each
  // edit of its environment.
  const found = new Map<string, { line: number; col: number }>();
  const missing = new Map<string, Place>();
  const waiting: { problem: Problem; key: string }[] = [];
  const place = (problem: Problem, ...at: Place) => {
    const key = JSON.stringify(at);
    waiting.push({ problem, key });
    if (!found.has(key)) missing.set(key, at);
  };
  const located = async () => {
    const asked = [...missing];
    missing.clear();
    const places = asked.map(([, at]) => at);
    const reply = places.length > 0 && !parsed ? await askWorker(file, content, places).catch(() => undefined) : undefined;
    const positions = reply && "positions" in reply ? reply.positions : places.map(([path, anchor]) => locate(path, anchor));
    asked.forEach(([key], i) => found.set(key, positions[i]!));
    for (const { problem, key } of waiting.splice(0)) Object.assign(problem, found.get(key));
  };
  return { file, positional: true, locate, deferred: { place, located } };
}

/** A source with the positions of every node of the content (the parse worker's answer to `places`). */
export function positionsOf(file: string, content: Content): Source {
  const read = textOf(file, content);
  if (!("text" in read)) return inlineSource(file);
  const { doc, lines } = documentOf(withoutBom(read.text));
  return yamlSource(file, doc, lines);
}

/**
 * The `yaml` package's first Document of a text, with every node's position (`lines` turns an
 * offset into line:col), and the syntax tree it was composed from (yaml-errors.ts reads it).
 */
function documentOf(text: string): { doc: Document; lines: LineCounter; tree: CST.Token[] } {
  const { Composer, LineCounter, Parser } = yaml();
  const lines = new LineCounter();
  const tree = [...new Parser(lines.addNewLine).parse(text)];
  // Duplicate keys are found by duplicateKeys (yaml's own check compares each key with every
  // earlier one); merge keys as js-yaml reads them. (A second document: js-yaml says so.)
  const [doc] = new Composer({ uniqueKeys: false, merge: true }).compose(tree, true, text.length);
  return { doc: doc!, lines, tree };
}

/**
 * The problems of a text that could not be read, located by the `yaml` package: its first error
 * explained (yaml-errors.ts), a duplicate key, a recursive alias, or a second document; when it
 * finds none, `found` (what js-yaml, or the shape check, said).
 */
function yamlProblems(file: string, text: string, found: Problem): YamlRead {
  const { doc, lines, tree } = documentOf(text);
  const { isMap } = yaml();
  const multiEnvironment = isMap(doc.contents) && doc.contents.has("environments");
  const at = (offset: number, message: string): Problem => ({ file, ...lines.linePos(offset), message });
  const explained = explainYamlErrors(text, tree, doc, (offset) => lines.linePos(offset));
  const problems: Problem[] = explained.map((p) => ({ file, ...p }));
  if (problems.length === 0)
    problems.push(...duplicateKeys(doc).map((key) => at(key.range?.[0] ?? 0, `duplicate key '${String(key.value)}'`)));
  const cycle = problems.length === 0 ? recursiveAlias(doc) : undefined;
  if (cycle) problems.push(at(cycle.range?.[0] ?? 0, "YAML alias refers to a node that contains it"));
  const second = problems.length === 0 ? tree.filter((token) => token.type === "document")[1] : undefined;
  if (second) problems.push(at(second.offset, "a second YAML document starts here: a flag file holds one document"));
  if (problems.length === 0) problems.push(found);
  return { problems, multiEnvironment };
}

/** js-yaml's error at its position (0-based there). */
function jsYamlProblem(file: string, error: unknown): Problem {
  if (!(error instanceof YAMLException)) return { file, line: 1, col: 1, message: `cannot read YAML: ${(error as Error).message}` };
  const { mark, reason } = error as YAMLException & { mark?: { line: number; column: number } };
  return { file, line: (mark?.line ?? 0) + 1, col: (mark?.column ?? 0) + 1, message: `YAML syntax error: ${reason}` };
}

/** The second and later occurrences of a scalar key in the same mapping (YAML forbids them). */
function duplicateKeys(doc: Document): Scalar[] {
  const found: Scalar[] = [];
  const { isMap, isScalar, isSeq } = yaml();
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
