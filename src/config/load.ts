/**
 * The loader: what the sources read (src/sources/), or inline objects -> environments, plus every
 * problem found, all at once. A problem costs only what it breaks: one bad file never takes the rest down.
 */
import { unusableFlag } from "../engine/compile.js";
import type { CompiledFlag } from "../engine/types.js";
import { InlineSource } from "../sources/inline-source.js";
import { readFiles } from "../sources/read-once.js";
import type { InputSet } from "../sources/inputs.js";
import type { ConfigSource, SourceDocument, SourceEnvironment, SourceLoad } from "../sources/source.js";
import { expandNotifications, variablesOf, type EnvVars } from "./expand.js";
import { fillEntries, reuseEntries, type LoadMemo } from "./memo.js";
import { mergeDocuments, originText, type MergedEnvironment, type Origin } from "./merge.js";
import { contentLength, parseContent, parseData, parseOffThread, type Content, type ParsedFile } from "./parse.js";
import { ENVIRONMENT_NAME_RULE, isEnvironmentName } from "./schema.js";
import { docProblem, problemAt, type EnvDocument, type Source } from "./positions.js";
import type { EnvironmentConfig, Problem } from "../model/types.js";
import { canonicalJson, compare, isRecord, setOwn } from "../model/json.js";
import { addTo, compileAndLocate, validateDocument, type LocatedCompilation } from "./validate.js";

export interface LoadedEnvironment {
  config: EnvironmentConfig;
  flags: Map<string, CompiledFlag>;
}

export interface ConfigLoad {
  /** Environments no problem took out, by name (sorted). */
  environments: Map<string, LoadedEnvironment>;
  /** By environment name, or "" for problems not tied to one environment; each list sorted by file:line:col. */
  problems: Map<string, Problem[]>;
  /** A file read before it settled changed meanwhile (InputSet.settled): nothing was built; read again. */
  unsettled?: true;
}

export interface LoadOptions {
  /** Where `${NAME}` in notifications is looked up; default `process.env`. */
  env?: EnvVars;
  /** Where every file and directory read is recorded, to tell later whether the load is stale. */
  inputs?: InputSet;
  /** Parse in the parse worker (a server that watches its files): requests are answered meanwhile. */
  offThread?: boolean;
  /** What the last load with the same memo did, reused where its input did not change (memo.ts); the load's work is counted in it. */
  memo?: LoadMemo;
}

/** What one environment is made of, before validation. */
interface FoundEnvironment {
  name: string;
  docs: EnvDocument[];
  files: string[];
  /** Where it is defined (a file, directory or URL), to name when another source defines it too. */
  origin: string;
  /** Set for a subdirectory environment, whose files together must define `flags`. */
  dir?: string;
  /** URL documents answered from elsewhere: URL -> final URL. */
  redirects?: Record<string, string>;
}

/** Problems by environment name ("" for none). */
class ProblemMap extends Map<string, Problem[]> {
  add(key: string, ...problems: Problem[]): void {
    if (problems.length > 0) addTo(this, key, ...problems);
  }
}

/** PATH (a directory of environment files, or one file) -> environments: the file source, read once. */
export async function loadConfig(path: string, options: LoadOptions = {}): Promise<ConfigLoad> {
  return loadSourceReads([await readFiles(path, options.inputs)], options);
}

/** Every source, read once and loaded together (an environment defined by two sources is a problem). */
export async function loadSources(sources: readonly ConfigSource[], options: LoadOptions = {}): Promise<ConfigLoad> {
  return loadSourceReads(await Promise.all(sources.map((source) => source.read(options.inputs))), options);
}

/** For the programmatic API: environment name -> environment document, validated like a file (the inline source, read once). */
export async function loadInlineConfig(environments: Record<string, unknown>, options: LoadOptions = {}): Promise<ConfigLoad> {
  return loadSources([new InlineSource(environments)], options);
}

/** What the sources read -> environments, validated and compiled together. */
export async function loadSourceReads(reads: readonly SourceLoad[], options: LoadOptions = {}): Promise<ConfigLoad> {
  const problems = new ProblemMap();
  const found: FoundEnvironment[] = [];
  const sources = new Set<Source>();
  for (const read of reads) found.push(...(await fromSource(read, problems, options, sources)));
  // A file read before it settled was parsed meanwhile, but is built only if still as read: a half-written file is never looked at.
  const settled = (await options.inputs?.settled()) ?? true;
  if (options.offThread) await turn();
  const environments = settled ? buildAll(withoutDuplicates(found, problems), problems, options) : undefined;
  options.memo?.end();
  if (!environments) return { environments: new Map(), problems: new Map(), unsettled: true };
  // Problems of the files the parse worker read are placed there (parse.ts), then sorted.
  await Promise.all([...sources].map((source) => source.deferred?.located()));
  const sorted = new Map<string, Problem[]>();
  for (const key of [...problems.keys()].sort(compare)) sorted.set(key, [...problems.get(key)!].sort(byPosition));
  return { environments, problems: sorted };
}

/** A turn of the event loop between a running server's reload stages: a request waits for one stage, not for all. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A document's value, parsed again only when its content changed (memo.ts). Whatever the parser
 * throws (a hostile document) is a problem of that document, never an escaped exception.
 */
const parseDocument = (document: SourceDocument, options: LoadOptions): Promise<ParsedFile> =>
  parseChanged(document, options).catch((error: Error) => ({ problems: [fileProblem(document.file, `cannot be read: ${error.message}`)] }));

async function parseChanged(document: SourceDocument, { offThread, memo }: LoadOptions): Promise<ParsedFile> {
  const { file } = document;
  if ("error" in document) return { problems: [{ file, line: document.line ?? 0, col: document.col ?? 0, message: document.error }] };
  let content: Content;
  let key: string;
  if ("value" in document) {
    try {
      content = { text: JSON.stringify(document.value) ?? "null" };
    } catch (error) {
      return { problems: [fileProblem(file, `not JSON data: ${(error as Error).message}`)] };
    }
    key = content.text;
  } else if ("bytes" in document) [content, key] = [{ bytes: document.bytes }, document.hash];
  else [content, key] = [{ text: document.text }, document.text];
  const known = memo?.parsed.get(file);
  if (known?.content === key) {
    memo!.parsed.set(file, known);
    return known.parsed;
  }
  memo?.count("filesParsed");
  memo?.count("charsParsed", contentLength(content));
  let parsed: ParsedFile;
  if ("value" in document) parsed = parseData(file, key);
  else if (offThread) {
    parsed = await parseOffThread(file, content);
    await turn();
  } else parsed = parseContent(file, content);
  // A parse with problems is not kept: the next load reads the document again and reports them.
  if (parsed.entryTexts !== undefined) {
    const { entryTexts, ...whole } = parsed;
    const entries = fillEntries(whole.value, entryTexts, known?.entries);
    parsed = whole;
    if (memo) memo.parsed.set(file, { content: key, parsed, entries });
  } else if (memo && parsed.value !== undefined) {
    memo.parsed.set(file, { content: key, parsed, entries: reuseEntries(parsed.value, known?.entries) });
  }
  return parsed;
}

/** One source's documents, parsed, as environments (named by the layout, or by each document's content). */
async function fromSource(read: SourceLoad, problems: ProblemMap, options: LoadOptions, sources: Set<Source>): Promise<FoundEnvironment[]> {
  for (const p of read.problems) problems.add(p.env, fileProblem(p.file, p.message));
  const found: FoundEnvironment[] = [];
  const singles = await Promise.all(read.documents.map(({ document }) => parseDocument(document, options)));
  read.documents.forEach(({ stem, document }, i) => found.push(...fromSingleFile(document, stem, singles[i]!, problems)));
  const originOf = (env: SourceEnvironment) => env.dir ?? env.documents[0]?.file ?? read.id;
  const named = read.environments.filter((env) => {
    if (isEnvironmentName(env.name)) return true;
    problems.add("", fileProblem(originOf(env), notAnEnvironmentName(env.name)));
    return false;
  });
  const parsed = await Promise.all(named.map((env) => Promise.all(env.documents.map((d) => parseDocument(d, options)))));
  for (const file of [...singles, ...parsed.flat()]) if (file.source) sources.add(file.source);
  named.forEach((env, i) => {
    const docs: EnvDocument[] = [];
    for (const file of parsed[i] ?? []) {
      problems.add(env.name, ...file.problems);
      if (file.source && file.problems.length === 0) docs.push({ source: file.source, prefix: [], value: file.value });
    }
    // Data given as values was read from no file.
    const files = env.documents.filter((d) => !("value" in d)).map((d) => d.file);
    found.push({ name: env.name, docs, files, origin: originOf(env), dir: env.dir });
  });
  return found;
}

/**
 * An environment found twice (two sources, or a file PATH and a directory holding it) is left
 * out, with a problem naming both: which one is meant is not ours to guess.
 */
function withoutDuplicates(found: FoundEnvironment[], problems: ProblemMap): FoundEnvironment[] {
  const byName = new Map<string, FoundEnvironment[]>();
  for (const input of found) addTo(byName, input.name, input);
  const kept: FoundEnvironment[] = [];
  for (const input of found) {
    const { name, origin } = input;
    const others = byName.get(name)!.filter((o) => o !== input);
    if (others.length === 0) kept.push(input);
    else problems.add(name, fileProblem(origin, `environment '${name}' is also defined by ${others.map((o) => o.origin).join(", ")}`));
  }
  return kept;
}

/** PATH is one file: an `environments:` map of environments, or one environment named by its stem. */
function fromSingleFile(document: SourceDocument, stem: string, parsed: ParsedFile, problems: ProblemMap): FoundEnvironment[] {
  const { file } = document;
  const redirects = "finalUrl" in document && document.finalUrl !== undefined ? { [file]: document.finalUrl } : undefined;
  const value = parsed.value;
  const multi = isRecord(value) ? "environments" in value : parsed.multiEnvironment === true;
  const single = !multi && isEnvironmentName(stem);
  if (!multi && !single) problems.add("", fileProblem(file, notAnEnvironmentName(stem)));
  if (parsed.problems.length > 0) {
    // A broken multi-environment file cannot say which environments it holds.
    problems.add(single ? stem : "", ...parsed.problems);
    return [];
  }
  const { source } = parsed;
  if (!source) return [];
  if (single) return [{ name: stem, docs: [{ source, prefix: [], value }], files: [file], origin: file, redirects }];
  if (!multi || !isRecord(value)) return [];

  // The wrapper: `environments:` (and `$schema`), nothing else.
  for (const key of Object.keys(value)) {
    if (key === "environments" || key === "$schema") continue;
    problems.add("", problemAt(source, [key], `unknown property '${key}' (expected $schema, environments)`, "key"));
  }
  const envs = value.environments;
  if (!isRecord(envs) || Object.keys(envs).length === 0) {
    problems.add("", problemAt(source, ["environments"], "environments: must be a map of at least one environment", "key"));
    return [];
  }
  const inputs: FoundEnvironment[] = [];
  for (const [name, doc] of Object.entries(envs)) {
    if (!isEnvironmentName(name)) problems.add("", problemAt(source, ["environments", name], notAnEnvironmentName(name), "key"));
    else inputs.push({ name, docs: [{ source, prefix: ["environments", name], value: doc }], files: [file], origin: file, redirects });
  }
  return inputs;
}

interface Built {
  name: string;
  /** Set when a problem takes the whole environment out. */
  fatal: boolean;
  merged?: MergedEnvironment;
  flags?: Map<string, CompiledFlag>;
}

/** The environments without a problem that takes them out, each built (or reused), by name. */
function buildAll(inputs: FoundEnvironment[], problems: ProblemMap, options: LoadOptions): Map<string, LoadedEnvironment> {
  const env = options.env ?? process.env;
  const built = inputs.map((input) => buildOrReuse(input, env, problems, options.memo));
  leaveOutSharedApiKeys(built, problems);
  const environments = new Map<string, LoadedEnvironment>();
  for (const b of built.sort((x, y) => compare(x.name, y.name))) {
    if (b.merged && b.flags && !b.fatal) environments.set(b.name, { config: b.merged.config, flags: b.flags });
  }
  return environments;
}

/** An environment as built by the last load, with what it was built from. */
interface BuiltBefore {
  input: FoundEnvironment;
  variables: string;
  built: Built;
  problems: Problem[];
}

/** The last load's build of this environment if made from the same documents (memo.ts), files, directory and variables; else a build. */
function buildOrReuse(input: FoundEnvironment, env: EnvVars, problems: ProblemMap, memo: LoadMemo | undefined): Built {
  // Problems found before (reading, parsing) are this load's own: built afresh.
  if (!memo || problems.has(input.name)) return build(input, env, problems, memo);
  const variables = input.docs.map((doc) => variablesOf(doc, env)).join("\n");
  const before = memo.environments.get(input.name) as BuiltBefore | undefined;
  if (before && before.variables === variables && sameSources(before.input, input)) {
    memo.environments.set(input.name, before);
    const compiled = memo.compiled.get(input.name);
    if (compiled) memo.compiled.set(input.name, compiled);
    problems.add(input.name, ...before.problems);
    return { ...before.built };
  }
  memo.count("environmentsBuilt");
  const built = build(input, env, problems, memo);
  const entry: BuiltBefore = { input, variables, built: { ...built }, problems: [...(problems.get(input.name) ?? [])] };
  memo.environments.set(input.name, entry);
  return built;
}

const sameSources = (a: FoundEnvironment, b: FoundEnvironment): boolean =>
  a.dir === b.dir &&
  a.files.join("\n") === b.files.join("\n") &&
  canonicalJson(a.redirects) === canonicalJson(b.redirects) &&
  a.docs.length === b.docs.length &&
  a.docs.every(
    (doc, i) => doc.value === b.docs[i]!.value && doc.source === b.docs[i]!.source && doc.prefix.join("/") === b.docs[i]!.prefix.join("/"),
  );

/**
 * One environment: expand, validate each document, merge and compile. A problem inside one flag (or
 * segment) takes out that flag (or the flags using it) alone, any other the environment; the checks
 * still run past it, so that every problem is reported in one run.
 */
function build(input: FoundEnvironment, env: EnvVars, problems: ProblemMap, memo?: LoadMemo): Built {
  try {
    return buildUnguarded(input, env, problems, memo);
  } catch (error) {
    // The stage boundary: a check that throws (a stack overflow on a value the shape check let
    // through, a bug) costs this environment, never the load of the others.
    problems.add(input.name, fileProblem(input.origin, `cannot be loaded: ${(error as Error).message}`));
    return { name: input.name, fatal: true };
  }
}

function buildUnguarded(input: FoundEnvironment, env: EnvVars, problems: ProblemMap, memo?: LoadMemo): Built {
  const { name } = input;
  const flagProblems = new Map<string, Problem[]>();
  const segmentProblems = new Map<string, Problem[]>();
  const schemaValid = new Set<EnvDocument>();
  const docs: EnvDocument[] = [];
  for (const written of input.docs) {
    const { doc, problems: unset } = expandNotifications(written, env);
    docs.push(doc);
    problems.add(name, ...unset);
    const check = validateDocument(doc, memo?.validFlags);
    memo?.count("flagsValidated", check.flagsChecked);
    if (check.schemaValid) schemaValid.add(doc);
    problems.add(name, ...check.problems);
    for (const [key, list] of check.flagProblems) addTo(flagProblems, key, ...list);
    for (const [key, list] of check.segmentProblems) addTo(segmentProblems, key, ...list);
  }
  if (docs.length === 0) return { name, fatal: true };

  // A file that lost its `flags` (half-saved, wrong file) must not serve "no flags"; `flags: {}` says it on purpose.
  // (Not for a document that is not even a mapping: the schema has said so.)
  if (!docs.some((d) => !isRecord(d.value) || "flags" in d.value)) {
    const hint = "(write `flags: {}` for an environment without flags)";
    const missing = input.dir
      ? fileProblem(input.dir, `no file of this environment defines 'flags' ${hint}`)
      : docProblem(docs[0]!, [], `missing 'flags' ${hint}`, "key");
    problems.add(name, missing);
  }

  const merged = mergeDocuments(name, docs, input.files, new Set(flagProblems.keys()), schemaValid);
  if (input.redirects) merged.config.redirects = input.redirects;
  problems.add(name, ...merged.problems);
  for (const [key, list] of merged.flagProblems) addTo(flagProblems, key, ...list);
  // Everything reported so far is outside flags and segments (or a file that could not be read).
  const fatal = problems.has(name);
  // (A problem of two flags is reported once.)
  problems.add(name, ...new Set([...flagProblems.values(), ...segmentProblems.values()].flat()));

  const compiled = compileAndLocate(merged, segmentProblems.keys(), memo?.compiled.get(name));
  memo?.count("flagsCompiled", compiled.compiledFlags);
  if (compiled.memo) memo?.compiled.set(name, compiled.memo);
  problems.add(name, ...compiled.problems);
  const flags = withUnusableFlags(merged, compiled, flagProblems);
  return { name, fatal, merged, flags };
}

/**
 * The served flags: the compiled ones, and for every flag with a problem one that answers
 * PARSE_ERROR, named in the configuration's `invalidFlags` (a reload gives them their last good definition).
 */
function withUnusableFlags(
  merged: MergedEnvironment,
  compiled: LocatedCompilation,
  flagProblems: Map<string, Problem[]>,
): Map<string, CompiledFlag> {
  const { config } = merged;
  const invalid: Record<string, string> = {};
  for (const [key, reason] of compiled.broken) setOwn(invalid, key, reason);
  if (compiled.broken.size > 0) {
    config.flags = Object.fromEntries(Object.entries(config.flags).filter(([key]) => !compiled.broken.has(key)));
  }
  // A copy to add them to: the compiled map is also the compile memo's. In key order, which does
  // not depend on which flags this load had to check.
  const flags = flagProblems.size > 0 ? new Map(compiled.flags) : compiled.flags;
  for (const key of [...flagProblems.keys()].sort(compare)) {
    const list = flagProblems.get(key)!;
    const reason = `invalid flag definition: ${list.map((p) => p.message).join("; ")}`;
    setOwn(invalid, key, reason);
    flags.set(key, unusableFlag(key, reason, config.metadata));
  }
  if (Object.keys(invalid).length > 0) config.invalidFlags = invalid;
  return flags;
}

/** A key must name one environment: requests are routed by key alone. The environments that share one are left out. */
function leaveOutSharedApiKeys(built: Built[], problems: ProblemMap): void {
  const byKey = new Map<string, Built[]>();
  for (const b of built) if (b.merged?.config.apiKey !== undefined) addTo(byKey, b.merged.config.apiKey, b);
  // merge.ts sets an API key and its origin together.
  const originOf = (b: Built): Origin => b.merged!.origins.apiKey!;
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    for (const b of group) {
      const { doc, path } = originOf(b);
      const others = group.filter((o) => o !== b).map((o) => `'${o.name}' (${originText(originOf(o))})`);
      problems.add(b.name, docProblem(doc, path, `apiKey is also used by environment ${others.join(", ")}`, "key"));
      b.fatal = true;
    }
  }
}

/** A problem with no place in a file: of the whole file, directory or source. */
const fileProblem = (file: string, message: string): Problem => ({ file, line: 0, col: 0, message });

const notAnEnvironmentName = (name: string): string => `'${name}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}`;

const byPosition = (a: Problem, b: Problem): number => compare(a.file, b.file) || a.line - b.line || a.col - b.col;
