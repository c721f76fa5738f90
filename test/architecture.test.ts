/**
 * The shape of src/: folders in layers, each importing only from the layers below it, and the
 * client commands loading no more than they use. Read from the source itself (static imports,
 * re-exports, dynamic `import()` and worker URLs), so a new import that breaks the layering fails
 * here, naming the file.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

/**
 * Bottom to top. A folder imports only from folders in earlier entries (not from its own entry's
 * other folders). "." is src/index.ts, the public API: it imports what it exports, nothing imports it.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["model"], // shared types (environment, flag, change, problem) and JSON helpers; imports nothing
  ["log"],
  ["engine"], // flag evaluation: a pure function of (flag, context)
  ["sources"], // where configuration text comes from: files, directories, URLs, inline
  ["config"], // parsing, validation, merging into environments
  ["store"], // snapshots, keys, the state directory
  ["evaluation"], // OFREP answers as plain data (status, body), for http/ and the CLI alike
  ["changes"], // a reload: load -> snapshots -> store -> one list of changes
  ["events", "notify", "fixture"], // subscribers to changes; test fixtures (sessions, faults, enrichment)
  ["answers"], // the OFREP answers once a request is read, transport-free: caches, ETags, counts
  ["http"], // the transports: the h3 app and the node:http fast path in front of it
  ["admin", "flagd"], // the admin API; flagd's gRPC services (--flagd-port)
  ["testing"], // `flagserve test`: test files, cases, rule coverage, reporters
  ["review"], // `flagserve diff`: two configurations compared, from git too
  ["server"], // the composition root
  ["cli"],
  ["."],
];

interface Import {
  from: string;
  /** A file under src/ (absolute path), or a package name. */
  to: string;
  /** Erased when compiled (`import type`, `export type`, `typeof import(...)`). */
  typeOnly: boolean;
  /** A worker thread's module (`new URL(..., import.meta.url)`): run apart, not imported. */
  worker?: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const packageName = (specifier: string): string =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean, worker = false) => {
    const to = specifier.startsWith(".") ? join(dirname(file), specifier).replace(/\.js$/, ".ts") : packageName(specifier);
    found.push({ from: file, to, typeOnly, worker });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ?? false);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, false);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) add(arg.literal.text, true);
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "URL") {
      // new URL("./worker.js", import.meta.url): a module loaded at run time (a worker thread).
      const [arg, base] = node.arguments ?? [];
      if (arg && ts.isStringLiteralLike(arg) && arg.text.startsWith(".") && base?.getText(tree) === "import.meta.url")
        add(arg.text, false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

const files = sourceFiles(SRC);
const imports = files.flatMap(importsOf);
const local = imports.filter((i) => i.to.startsWith(SRC));

/** The folder under src/ a file belongs to ("." for src/ itself). */
const folderOf = (file: string): string => {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0]! : ".";
};

/** Folder -> the folders it imports from, with one import as the example for each. */
function folderGraph(): Map<string, Map<string, Import>> {
  const graph = new Map<string, Map<string, Import>>();
  for (const i of local) {
    const [a, b] = [folderOf(i.from), folderOf(i.to)];
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, i);
  }
  return graph;
}

const show = (i: Import): string => `${relative(SRC, i.from)} -> ${i.to.startsWith(SRC) ? relative(SRC, i.to) : i.to}`;

/** Every cycle through folders, each as a list of the imports that close it. */
function folderCycles(graph: Map<string, Map<string, Import>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: Import[] = [];
  const walk = (folder: string) => {
    state.set(folder, "open");
    for (const [next, example] of graph.get(folder) ?? []) {
      path.push(example);
      if (state.get(next) === "open") {
        const start = path.findIndex((i) => folderOf(i.from) === next);
        cycles.push(path.slice(start).map(show));
      } else if (!state.has(next)) walk(next);
      path.pop();
    }
    state.set(folder, "done");
  };
  for (const folder of graph.keys()) if (!state.has(folder)) walk(folder);
  return cycles;
}

/** The files and packages `entry` loads at run time, directly or through other files. */
function runtimeReach(entry: string): Set<string> {
  const reached = new Set<string>([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const i of imports) {
      if (i.from !== file || i.typeOnly || reached.has(i.to)) continue;
      reached.add(i.to);
      if (i.to.startsWith(SRC)) queue.push(i.to);
    }
  }
  return reached;
}

/** Every cycle through files (type-only imports included: a reader follows them too). */
function fileCycles(): string[][] {
  const next = new Map<string, Import[]>();
  for (const i of local) if (!i.worker) next.set(i.from, [...(next.get(i.from) ?? []), i]);
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: Import[] = [];
  const walk = (file: string) => {
    state.set(file, "open");
    for (const i of next.get(file) ?? []) {
      path.push(i);
      if (state.get(i.to) === "open") cycles.push(path.slice(path.findIndex((p) => p.from === i.to)).map(show));
      else if (!state.has(i.to)) walk(i.to);
      path.pop();
    }
    state.set(file, "done");
  };
  for (const file of files) if (!state.has(file)) walk(file);
  return cycles;
}

describe("src/ layering", () => {
  it("reads the imports, static and dynamic", () => {
    // The analysis itself: if it found nothing, every check below would pass for nothing.
    expect(files.length).toBeGreaterThan(50);
    const shown = imports.map(show);
    expect(shown).toContain("evaluation/ofrep-bodies.ts -> engine/index.ts");
    expect(shown).toContain("sources/files-source.ts -> sources/watch.ts"); // import("./watch.js")
    expect(shown).toContain("config/parse.ts -> config/parse-worker.ts"); // a worker's URL
    expect(shown).toContain("sources/watch.ts -> chokidar");
  });

  it("has no import cycles between folders", () => {
    expect(folderCycles(folderGraph())).toEqual([]);
  });

  it("has no import cycles between files", () => {
    expect(fileCycles()).toEqual([]);
  });

  it("has every folder in a layer", () => {
    const known = new Set(LAYERS.flat());
    const unknown = [...new Set(files.map(folderOf))].filter((f) => !known.has(f));
    expect(unknown, "add the new folder to LAYERS in test/architecture.test.ts").toEqual([]);
    const atRoot = files.filter((f) => folderOf(f) === ".").map((f) => relative(SRC, f));
    expect(atRoot).toEqual(["index.ts"]);
  });

  it("imports only from layers below", () => {
    const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
    const upward = [...folderGraph()].flatMap(([from, targets]) =>
      [...targets].filter(([to]) => (rank.get(to) ?? Infinity) >= (rank.get(from) ?? -Infinity)).map(([, example]) => show(example)),
    );
    expect(upward).toEqual([]);
  });

  it("keeps the answering code free of transports (no h3, no node:http)", () => {
    const transports = imports.filter((i) => folderOf(i.from) === "answers" && ["h3", "listhen", "node:http", "node:net"].includes(i.to));
    expect(transports.map(show)).toEqual([]);
    expect(files.some((f) => folderOf(f) === "answers")).toBe(true);
  });

  it("keeps the model free of dependencies", () => {
    const model = imports.filter((i) => folderOf(i.from) === "model" && !(i.to.startsWith(SRC) && folderOf(i.to) === "model"));
    expect(model.map(show)).toEqual([]);
  });
});

describe("client commands", () => {
  it("flagserve test, diff and manifest load neither the HTTP server nor the watcher", () => {
    for (const command of ["test.ts", "diff.ts", "manifest.ts"]) {
      const reached = runtimeReach(join(SRC, "cli", command));
      expect(reached).toContain(join(SRC, "config", "load.ts"));
      expect([...reached].filter((r) => ["h3", "listhen", "chokidar"].includes(r))).toEqual([]);
      expect(
        [...reached]
          .filter((r) => r.startsWith(join(SRC, "http") + sep) || r.startsWith(join(SRC, "server") + sep))
          .map((r) => relative(SRC, r)),
      ).toEqual([]);
    }
  });

  it("flagserve keys loads neither the HTTP server nor the watcher", () => {
    const reached = runtimeReach(join(SRC, "cli", "keys.ts"));
    // It does load the configuration and the key store.
    expect(reached).toContain(join(SRC, "config", "load.ts"));
    expect(reached).toContain(join(SRC, "store", "rotate.ts"));
    expect([...reached].filter((r) => ["h3", "listhen", "chokidar"].includes(r))).toEqual([]);
    expect(
      [...reached]
        .filter((r) => r.startsWith(join(SRC, "http") + sep) || r.startsWith(join(SRC, "server") + sep))
        .map((r) => relative(SRC, r)),
    ).toEqual([]);
  });
});
