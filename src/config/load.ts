/**
 * The loader: PATH (or inline objects) -> every environment that is entirely valid, plus every
 * problem found, all at once. An environment with any problem is left out and the others still
 * load: one bad file never takes the rest down.
 */
import { readFile } from "node:fs/promises";
import { isMap } from "yaml";
import type { CompiledFlag } from "../engine/types.js";
import { discover, errorCode, stemOf } from "./discover.js";
import { expandNotifications, type EnvVars } from "./expand.js";
import { mergeDocuments, originText, type MergedEnvironment } from "./merge.js";
import { parseYaml, type ParsedFile } from "./parse.js";
import { ENVIRONMENT_NAME_RULE, isEnvironmentName } from "./schema.js";
import { docProblem, inlineSource, problemAt, type EnvDocument } from "./source.js";
import type { EnvironmentConfig, Problem } from "./types.js";
import { compare, isRecord } from "./util.js";
import { compileAndLocate, validateDocument } from "./validate.js";

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
}

/** What one environment is made of, before validation. */
interface EnvironmentInput {
  name: string;
  docs: EnvDocument[];
  files: string[];
  /** Set for a subdirectory environment, whose files together must define `flags`. */
  dir?: string;
}

/** Problems by environment name ("" for none). */
class ProblemMap extends Map<string, Problem[]> {
  add(key: string, ...problems: Problem[]): void {
    if (problems.length > 0) this.set(key, [...(this.get(key) ?? []), ...problems]);
  }
}

export async function loadConfig(path: string, options: LoadOptions = {}): Promise<ConfigLoad> {
  const found = await discover(path);
  const problems = new ProblemMap(found.problems);
  const inputs: EnvironmentInput[] = [];

  if (found.file) {
    const parsed = await readAndParse(found.file);
    inputs.push(...fromSingleFile(found.file, parsed, problems));
  } else {
    const parsedEnvs = await Promise.all(found.environments.map(async (env) => Promise.all(env.files.map(readAndParse))));
    found.environments.forEach((env, i) => {
      const docs: EnvDocument[] = [];
      for (const parsed of parsedEnvs[i] ?? []) {
        problems.add(env.name, ...parsed.problems);
        if (parsed.source && parsed.problems.length === 0) docs.push({ source: parsed.source, prefix: [], value: parsed.value });
      }
      inputs.push({ name: env.name, docs, files: env.files, ...(env.dir ? { dir: env.dir } : {}) });
    });
  }
  return finish(inputs, problems, options);
}

/** For the programmatic API: environment name -> environment document, validated like a file. */
export function loadInlineConfig(environments: Record<string, unknown>, options: LoadOptions = {}): ConfigLoad {
  const problems = new ProblemMap();
  const inputs: EnvironmentInput[] = [];
  for (const [name, document] of Object.entries(environments)) {
    const source = inlineSource(name);
    if (!isEnvironmentName(name)) {
      problems.add("", problemAt(source, [], `'${name}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}`));
      continue;
    }
    let value: unknown;
    try {
      // A private, JSON-only copy: later changes to the caller's object cannot reach a snapshot.
      value = JSON.parse(JSON.stringify(document) ?? "null");
    } catch (error) {
      problems.add(name, problemAt(source, [], `not JSON data: ${(error as Error).message}`));
      continue;
    }
    inputs.push({ name, docs: [{ source, prefix: [], value }], files: [] });
  }
  return finish(inputs, problems, options);
}

async function readAndParse(file: string): Promise<ParsedFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const message = `cannot read file: ${errorCode(error)}`;
    return { problems: [{ file, line: 0, col: 0, message }] };
  }
  return parseYaml(file, text);
}

/** PATH is one file: an `environments:` map of environments, or one environment named by its stem. */
function fromSingleFile(file: string, parsed: ParsedFile, problems: ProblemMap): EnvironmentInput[] {
  const stem = stemOf(file);
  const value = parsed.value;
  const multi = isRecord(value) ? "environments" in value : isMap(parsed.doc?.contents) && parsed.doc.contents.has("environments");
  const single = !multi && isEnvironmentName(stem);
  if (!multi && !single) {
    problems.add("", { file, line: 0, col: 0, message: `'${stem}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}` });
  }
  if (parsed.problems.length > 0) {
    // A broken multi-environment file cannot say which environments it holds.
    problems.add(single ? stem : "", ...parsed.problems);
    return [];
  }
  const source = parsed.source;
  if (!source) return [];
  if (single) return [{ name: stem, docs: [{ source, prefix: [], value }], files: [file] }];
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
  const inputs: EnvironmentInput[] = [];
  for (const [name, doc] of Object.entries(envs)) {
    if (!isEnvironmentName(name)) {
      problems.add("", problemAt(source, ["environments", name], `'${name}' is not a valid environment name: ${ENVIRONMENT_NAME_RULE}`, "key"));
    } else {
      inputs.push({ name, docs: [{ source, prefix: ["environments", name], value: doc }], files: [file] });
    }
  }
  return inputs;
}

interface Built {
  name: string;
  merged?: MergedEnvironment;
  flags?: Map<string, CompiledFlag>;
}

function finish(inputs: EnvironmentInput[], problems: ProblemMap, options: LoadOptions): ConfigLoad {
  const env = options.env ?? process.env;
  const built = inputs.map((input) => build(input, env, problems));
  checkApiKeysAreUnique(built, problems);

  const environments = new Map<string, LoadedEnvironment>();
  for (const b of [...built].sort((x, y) => compare(x.name, y.name))) {
    if (b.merged && b.flags && !problems.has(b.name)) environments.set(b.name, { config: b.merged.config, flags: b.flags });
  }
  const sorted = new Map<string, Problem[]>();
  for (const key of [...problems.keys()].sort(compare)) sorted.set(key, [...(problems.get(key) ?? [])].sort(byPosition));
  return { environments, problems: sorted };
}

/** One environment: expand, validate each document, then merge and compile when the shapes allow. */
function build(input: EnvironmentInput, env: EnvVars, problems: ProblemMap): Built {
  const { name, docs } = input;
  const hadProblems = problems.has(name); // unreadable or unparsable files: some documents are missing
  let valid = true;
  for (const doc of docs) {
    problems.add(name, ...expandNotifications(doc, env));
    const check = validateDocument(doc);
    problems.add(name, ...check.problems);
    valid &&= check.valid;
  }
  if (hadProblems || docs.length === 0) return { name };

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
  if (!valid) return { name };

  const merged = mergeDocuments(name, docs, input.files);
  problems.add(name, ...merged.problems);
  const compiled = compileAndLocate(merged);
  problems.add(name, ...compiled.problems);
  return { name, merged, flags: compiled.flags };
}

/** A key must name one environment: requests are routed by key alone. */
function checkApiKeysAreUnique(built: Built[], problems: ProblemMap): void {
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
    }
  }
}

const byPosition = (a: Problem, b: Problem): number => compare(a.file, b.file) || a.line - b.line || a.col - b.col;
