/**
 * Where things are: a Source turns a JSON path (from the root of what was parsed) into a
 * line:col, so every later stage can report `file:line:col` without knowing about YAML.
 */
import type { Document, LineCounter, Node, Pair, YAMLMap } from "yaml";
import { yaml } from "./yaml-package.js";
import type { JsonPath, Problem } from "../model/types.js";

/** "key": the key naming the node; "value": the value itself, or its key when it is a mapping or list. */
export type Anchor = "key" | "value";

export interface Source {
  /** Absolute path, or `<inline:ENV>`. */
  readonly file: string;
  /** 1-based position of the node at `path`, or of its nearest existing ancestor; 0:0 when unknown. */
  locate(path: JsonPath, anchor?: Anchor): { line: number; col: number };
  /** False for inline configs, which have no positions: their messages name the path instead. */
  readonly positional: boolean;
  /** Positions found elsewhere (the parse worker): a problem `place`d is at 0:0 until `located()` resolves. */
  readonly deferred?: { place(problem: Problem, path: JsonPath, anchor: Anchor): void; located(): Promise<void> };
}

/** One environment document: a whole file, one entry of an `environments:` map, or an inline object. */
export interface EnvDocument {
  readonly source: Source;
  /** Path from the source's root to this document (`["environments", "dev"]` or `[]`). */
  readonly prefix: JsonPath;
  readonly value: unknown;
}

/** `flags.new-ui.variants.on`, `notifications[0].url`, `flags["a b"]`: readable, unambiguous enough. */
export function formatPath(path: JsonPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z0-9_$-]+$/.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** A problem at `path` of a source. Without positions the path is appended, so it can still be found. */
export function problemAt(source: Source, path: JsonPath, message: string, anchor: Anchor = "value"): Problem {
  const where = formatPath(path);
  const text = source.positional || where === "" || message.startsWith(where) ? message : `${message} (at ${where})`;
  const problem: Problem = { file: source.file, line: 0, col: 0, message: text };
  if (source.deferred) source.deferred.place(problem, path, anchor);
  else Object.assign(problem, source.locate(path, anchor));
  return problem;
}

/** A problem at `path` inside an environment document. */
export const docProblem = (doc: EnvDocument, path: JsonPath, message: string, anchor?: Anchor): Problem =>
  problemAt(doc.source, [...doc.prefix, ...path], message, anchor);

/** A source without positions, for configuration given as data (`file`: `<inline:ENV>`). */
export const inlineSource = (file: string): Source => ({ file, positional: false, locate: () => ({ line: 0, col: 0 }) });

/** Key text -> first pair, built once per mapping: locating many problems of a big file stays linear, not quadratic. */
const pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();
function pairsOf(map: YAMLMap): Map<string, Pair> {
  let index = pairIndex.get(map);
  if (!index) {
    index = new Map();
    for (const pair of map.items) {
      const text = yaml().isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!index.has(text)) index.set(text, pair);
    }
    pairIndex.set(map, index);
  }
  return index;
}

export function yamlSource(file: string, doc: Document, lineCounter: LineCounter): Source {
  const { isAlias, isMap, isSeq } = yaml();
  const pos = (node: Node | null | undefined) => {
    const offset = node?.range?.[0];
    return offset === undefined ? undefined : lineCounter.linePos(offset);
  };
  return {
    file,
    positional: true,
    locate(path, anchor = "value") {
      let node: unknown = doc.contents;
      let key: Node | undefined;
      for (const seg of path) {
        // Follow aliases so paths through `*anchor` still resolve (to the anchored text).
        if (isAlias(node)) node = node.resolve(doc);
        const pair = isMap(node) ? pairsOf(node).get(String(seg)) : undefined;
        const item: unknown = isSeq(node) && /^\d+$/.test(String(seg)) ? node.items[Number(seg)] : undefined;
        if (pair) {
          key = pair.key as Node;
          // `a:` with nothing after it has no value node: the key is the best place.
          node = pair.value ?? key;
        } else if (item !== undefined) {
          key = undefined;
          node = item;
        } else break;
      }
      const target = anchor === "key" || isMap(node) || isSeq(node) ? (key ?? (node as Node)) : (node as Node);
      return pos(target) ?? pos(node as Node) ?? { line: 1, col: 1 };
    },
  };
}
