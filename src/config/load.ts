/**
 * The loader: what the sources read (src/sources/), or inline objects -> every environment that
 * is entirely valid, plus every problem found, all at once. An environment with any problem is
 * left out and the others still load: one bad file never takes the rest down.
 */
import { unusableFlag } from "../engine/compile.js";
import type { CompiledFlag } from "../engine/types.js";
import { InlineSource } from "../sources/inline-source.js";
import { readFiles } from "../sources/read-once.js";
import type { InputSet } from "../sources/inputs.js";
import type { ConfigSource, SourceDocument, SourceLoad } from "../sources/source.js";
import { expandNotifications, type EnvVars } from "./expand.js";
import { mergeDocuments, originText, type MergedEnvironment } from "./merge.js";
import { parseYamlOffThread, parseYamlYielding, type ParsedFile } from "./parse.js";
import { ENVIRONMENT_NAME_RULE, isEnvironmentName } from "./schema.js";
import { docProblem, inlineSource, problemAt, type EnvDocument } from "./positions.js";
import type { EnvironmentConfig, Problem } from "../model/types.js";
import { compare, isRecord, setOwn } from "../model/json.js";
import { runStepsYielding, type Steps } from "../model/steps.js";
import { addTo, compileAndLocate, validateDocument, type LocatedCompilation } from "./validate.js";
import { yaml } from "./yaml-package.js";

export interface LoadedEnvironment {
  config: EnvironmentConfig;
  flags: Map<string, CompiledFlag>;
}

export interface ConfigLoad {
  /** Environments without any problem, by name (sorted). */
  environments: Map<string, LoadedEnvironment>;
  /** By environment name, or "" for problems not tied to one environment; each list sorted by file:line:col. */
  problems: Map<string, Problem[]>;
}

export interface LoadOptions {
  /** Where `${NAME}` in notifications is looked up; default `process.env`. */
  env?: EnvVars;
  /** Where every file and directory read is recorded, to tell later whether the load is stale. */
  inputs?: InputSet;
  /**
   * Parse big files in a worker thread, so that a running server keeps answering meanwhile
   * (reloads). Off by default: at start-up and for `validate` nothing is being served, and the
   * worker would only add its own start-up and the copy of the value back.
   */
  offThread?: boolean;
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
}

/** Problems by environment name ("" for none). */
class ProblemMap extends Map<string, Problem[]> {
  add(key: string, ...problems: Problem[]): void {
    if (problems.length > 0) this.set(key, [...(this.get(key) ?? []), ...problems]);
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

/** What the sources read -> environments, validated and compiled together. */
export async function loadSourceReads(reads: readonly SourceLoad[], options: LoadOptions = {}): Promise<ConfigLoad> {
  const problems = new ProblemMap();
  const found: FoundEnvironment[] = [];
  for (const read of reads) found.push(...(await fromSource(read, problems, options.offThread ?? false)));
  return runStepsYielding(finish(withoutDuplicates(found, problems), problems, options));
}

const parseDocument = async (document: SourceDocument, offThread: boolean): Promise<ParsedFile> =>
  "error" in document
    ? { problems: [{ file: document.file, line: 0, col: 0, message: document.error }] }
    : "value" in document
      ? copyData(document.file, document.value)
      : offThread
        ? parseYamlOffThread(document.file, document.text)
        : parseYamlYielding(document.file, document.text);

/** Data given as values: a private, JSON-only copy, so later changes to the caller's object cannot reach a snapshot. */
function copyData(file: string, value: unknown): ParsedFile {
  const source = inlineSource(file);
  try {
    return { source, value: JSON.parse(JSON.stringify(value) ?? "null"), problems: [] };
  } catch (error) {
    return { problems: [problemAt(source, [], `not JSON data: ${(error as Error).message}`)] };
  }
}

/** One source's documents, parsed, as environments (named by the layout, or by each document's content). */
async function fromSource(read: SourceLoad, problems: ProblemMap, offThread: boolean): Promise<FoundEnvironment[]> {
  for (const p of read.problems) problems.add(p.env, { file: p.file, line: 0, col: 0, message: p.message });
  const found: FoundEnvironment[] = [];
  const singles = await Promise.all(read.documents.map(({ document }) => parseDocument(document, offThread)));
  read.documents.forEach(({ stem, document }, i) => found.push(...fromSingleFile(document.file, stem, singles[i]!, problems)));
  const named = read.environments.filter((env) => {
    if (isEnvironmentName(env.name)) return true;
    const file = env.dir ?? env.documents[0]?.file ?? read.id;
    problems.add("", { file, line: 0, col: 0, message: `'${env.name}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}` });
    return false;
  });
  const parsed = await Promise.all(named.map((env) => Promise.all(env.documents.map((d) => parseDocument(d, offThread)))));
  named.forEach((env, i) => {
    const docs: EnvDocument[] = [];
    for (const file of parsed[i] ?? []) {
      problems.add(env.name, ...file.problems);
      if (file.source && file.problems.length === 0) docs.push({ source: file.source, prefix: [], value: file.value });
    }
    // Data given as values was read from no file.
    const files = env.documents.filter((d) => !("value" in d)).map((d) => d.file);
    const origin = env.dir ?? env.documents[0]?.file ?? read.id;
    found.push({ name: env.name, docs, files, origin, ...(env.dir ? { dir: env.dir } : {}) });
  });
  return found;
}

/**
 * An environment found twice (two sources, or a file PATH and a directory holding it) is left
 * out, with a problem naming both: which one is meant is not ours to guess.
 */
function withoutDuplicates(found: FoundEnvironment[], problems: ProblemMap): FoundEnvironment[] {
  const byName = new Map<string, FoundEnvironment[]>();
  for (const input of found) byName.set(input.name, [...(byName.get(input.name) ?? []), input]);
  const kept: FoundEnvironment[] = [];
  for (const [name, group] of byName) {
    if (group.length === 1) kept.push(...group);
    else {
      for (const input of group) {
        const others = group.filter((o) => o !== input).map((o) => o.origin);
        problems.add(name, { file: input.origin, line: 0, col: 0, message: `environment '${name}' is also defined by ${others.join(", ")}` });
      }
    }
  }
  return kept;
}

/** For the programmatic API: environment name -> environment document, validated like a file (the inline source, read once). */
export async function loadInlineConfig(environments: Record<string, unknown>, options: LoadOptions = {}): Promise<ConfigLoad> {
  return loadSources([new InlineSource(environments)], options);
}

/** PATH is one file: an `environments:` map of environments, or one environment named by its stem. */
function fromSingleFile(file: string, stem: string, parsed: ParsedFile, problems: ProblemMap): FoundEnvironment[] {
  const value = parsed.value;
  const multi = isRecord(value) ? "environments" in value : parsed.doc !== undefined && yaml().isMap(parsed.doc.contents) && parsed.doc.contents.has("environments");
  const single = !multi && isEnvironmentName(stem);
  if (!multi && !single) {
    problems.add("", { file, line: 0, col: 0, message: `'${stem}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}` });
  }
  if (parsed.problems.length > 0) {
    // A broken multi-environment file cannot say which environments it holds.
    problems.add(single ? stem : "", ...parsed.problems);
    return [];
  }
  const { source } = parsed;
  if (!source) return [];
  if (single) return [{ name: stem, docs: [{ source, prefix: [], value }], files: [file], origin: file }];
  if (!multi || !isRecord(value)) return [];

  // The wrapper: `environments:` (and `$schema`), nothing else.
  for (const key of Object.keys(value)) {
    if (key !== "environments" && key !== "$schema") {
      problems.add("", problemAt(source, [key], `unknown property '${key}' (expected $schema, environments)`, "key"));
    }
  }
  const envs = value.environments;
  if (!isRecord(envs) || Object.keys(envs).length === 0) {
    problems.add("", problemAt(source, ["environments"], "environments: must be a map of at least one environment", "key"));
    return [];
  }
  const inputs: FoundEnvironment[] = [];
  for (const [name, doc] of Object.entries(envs)) {
    if (!isEnvironmentName(name)) {
      problems.add("", problemAt(source, ["environments", name], `'${name}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}`, "key"));
    } else {
      inputs.push({ name, docs: [{ source, prefix: ["environments", name], value: doc }], files: [file], origin: file });
    }
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

function* finish(inputs: FoundEnvironment[], problems: ProblemMap, options: LoadOptions): Steps<ConfigLoad> {
  const env = options.env ?? process.env;
  const built: Built[] = [];
  for (const input of inputs) built.push(yield* build(input, env, problems));
  for (const name of checkApiKeysAreUnique(built, problems)) for (const b of built) if (b.name === name) b.fatal = true;

  const environments = new Map<string, LoadedEnvironment>();
  for (const b of [...built].sort((x, y) => compare(x.name, y.name))) {
    if (b.merged && b.flags && !b.fatal) environments.set(b.name, { config: b.merged.config, flags: b.flags });
  }
  const sorted = new Map<string, Problem[]>();
  for (const key of [...problems.keys()].sort(compare)) sorted.set(key, [...(problems.get(key) ?? [])].sort(byPosition));
  return { environments, problems: sorted };
}

/**
 * One environment: expand, validate each document, merge and compile. A problem inside one flag
 * (or one segment) takes out that flag (or the flags using it) alone; the environment is left
 * out only for problems outside flags and segments, which the checks still run past so that
 * every problem is reported in one run.
 */
function* build(input: FoundEnvironment, env: EnvVars, problems: ProblemMap): Steps<Built> {
  const { name, docs } = input;
  const flagProblems = new Map<string, Problem[]>();
  const segmentProblems = new Map<string, Problem[]>();
  const schemaValid = new Set<EnvDocument>();
  for (const doc of docs) {
    problems.add(name, ...expandNotifications(doc, env));
    const check = validateDocument(doc);
    if (check.schemaValid) schemaValid.add(doc);
    problems.add(name, ...check.problems);
    for (const [key, list] of check.flagProblems) addTo(flagProblems, key, ...list);
    for (const [key, list] of check.segmentProblems) addTo(segmentProblems, key, ...list);
    yield;
  }
  if (docs.length === 0) return { name, fatal: true };

  // A file that lost its `flags` (half-saved, wrong file) must not serve "no flags"; `flags: {}` says it on purpose.
  // (Not for a document that is not even a mapping: the schema has said so.)
  if (!docs.some((d) => !isRecord(d.value) || "flags" in d.value)) {
    const hint = "(write `flags: {}` for an environment without flags)";
    const [only] = docs;
    problems.add(
      name,
      input.dir || !only
        ? { file: input.dir ?? "", line: 0, col: 0, message: `no file of this environment defines 'flags' ${hint}` }
        : docProblem(only, [], `missing 'flags' ${hint}`, "key"),
    );
  }

  const merged = mergeDocuments(name, docs, input.files, new Set(flagProblems.keys()), schemaValid);
  yield;
  problems.add(name, ...merged.problems);
  for (const [key, list] of merged.flagProblems) addTo(flagProblems, key, ...list);
  // Everything reported so far is outside flags and segments (or a file that could not be read).
  const fatal = problems.has(name);
  for (const list of [...flagProblems.values(), ...segmentProblems.values()]) problems.add(name, ...list);

  const compiled = yield* compileAndLocate(merged, segmentProblems.keys());
  problems.add(name, ...compiled.problems);
  if (compiled.failed) return { name, fatal: true };
  const flags = withUnusableFlags(merged, compiled, flagProblems);
  return { name, fatal, merged, flags };
}

/**
 * The served flags: the compiled ones, and for every flag with a problem one that answers
 * PARSE_ERROR. The configuration keeps only the flags that can be served as written, and names
 * the others in `invalidFlags` (a reload gives them their last good definition).
 */
function withUnusableFlags(merged: MergedEnvironment, compiled: LocatedCompilation, flagProblems: Map<string, Problem[]>): Map<string, CompiledFlag> {
  const { config } = merged;
  const invalid: Record<string, string> = {};
  for (const [key, reason] of compiled.broken) {
    setOwn(invalid, key, reason);
    Reflect.deleteProperty(config.flags, key);
  }
  const flags = compiled.flags;
  for (const [key, list] of flagProblems) {
    const reason = `invalid flag definition: ${list.map((p) => p.message).join("; ")}`;
    setOwn(invalid, key, reason);
    flags.set(key, unusableFlag(key, reason, config.metadata));
  }
  if (Object.keys(invalid).length > 0) config.invalidFlags = invalid;
  return flags;
}

/** A key must name one environment: requests are routed by key alone. Returns the environments that share one. */
function checkApiKeysAreUnique(built: Built[], problems: ProblemMap): Set<string> {
  const clashing = new Set<string>();
  const byKey = new Map<string, Built[]>();
  for (const b of built) {
    const key = b.merged?.config.apiKey;
    if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), b]);
  }
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    for (const b of group) {
      const others = group.filter((o) => o !== b).map((o) => `'${o.name}' (${o.merged?.origins.apiKey ? originText(o.merged.origins.apiKey) : "?"})`);
      const origin = b.merged?.origins.apiKey;
      if (origin) problems.add(b.name, docProblem(origin.doc, origin.path, `apiKey is also used by environment ${others.join(", ")}`, "key"));
      clashing.add(b.name);
    }
  }
  return clashing;
}

const byPosition = (a: Problem, b: Problem): number => compare(a.file, b.file) || a.line - b.line || a.col - b.col;
