/**
 * Text -> plain value, keeping positions. JSON is parsed as YAML (it is YAML 1.2), so both
 * formats get the same line:col errors.
 */
import { LineCounter, isMap, isPair, isSeq, isScalar, parseDocument, visit, type Document, type Node, type Scalar, type YAMLError } from "yaml";
import { yamlSource, type Source } from "./source.js";
import type { Problem } from "./types.js";

export interface ParsedFile {
  /** Absent when the file could not be read. */
  source?: Source;
  /** The YAML document, even a broken one (to tell what it was meant to be). */
  doc?: Document;
  /** The document as plain JSON-like data; undefined when the file has problems. */
  value?: unknown;
  problems: Problem[];
}

/** yaml's own default; counts alias expansions, so "billion laughs" files fail fast. */
const MAX_ALIAS_COUNT = 100;

export function parseYaml(file: string, text: string): ParsedFile {
  // Editors show columns without the BOM; so must we.
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
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
  const at = (offset: number, message: string): Problem => ({ file, ...lineCounter.linePos(offset), message });

  // Warnings too (unresolved tags...): a value we could not read as written is an error here.
  const yamlProblems = [...doc.errors, ...doc.warnings].map((e) => at(e.pos[0], describe(e)));
  if (yamlProblems.length === 0) yamlProblems.push(...duplicateKeys(doc).map((key) => at(key.range?.[0] ?? 0, `duplicate key '${String(key.value)}'`)));
  if (yamlProblems.length > 0) return { source, doc, problems: yamlProblems };

  // A half-written file (truncated to nothing, or only its comment header) must never load as "no flags".
  const c = doc.contents;
  if (c === null || (isScalar(c) && c.value === null && c.range?.[0] === c.range?.[1])) {
    return { source, doc, problems: [{ file, line: 1, col: 1, message: "file is empty" }] };
  }
  const cycle = src.includes("*") ? recursiveAlias(doc) : undefined; // no `*`, no alias
  if (cycle) return { source, doc, problems: [at(cycle.range?.[0] ?? 0, "YAML alias refers to a node that contains it")] };
  try {
    return { source, doc, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), problems: [] };
  } catch (error) {
    return { source, doc, problems: [{ file, line: 1, col: 1, message: `cannot read YAML: ${(error as Error).message}` }] };
  }
}

function describe(error: YAMLError): string {
  return `YAML ${error.name === "YAMLWarning" ? "warning" : "syntax error"}: ${error.message}`;
}

/** The second and later occurrences of a scalar key in the same mapping (YAML forbids them). */
function duplicateKeys(doc: Document): Scalar[] {
  const found: Scalar[] = [];
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
