/**
 * `flagserve manifest [SOURCE...] [--env ENV] [-o FILE] [--check]`: the OpenFeature CLI's flag
 * manifest of the flag files, for `openfeature generate` (docs/typed-flags.md). Made from the
 * flags as loaded for serving (src/evaluation/manifest.ts), so it says what the server serves.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Command, Option } from "commander";
import type { LoadedEnvironment } from "../config/index.js";
import type { Manifest, ManifestProblem } from "../evaluation/manifest.js";
import { canonicalJson, compare, isRecord } from "../model/json.js";
import { sourceKindOf } from "../sources/source.js";
import { sourceHolding } from "../store/source-holding.js";
import { invocation, shellWord } from "./invocation.js";
import { parsePositiveNumber } from "./options.js";
import { displayPath, err, out, plural } from "./paths.js";
import { NO_ENVIRONMENTS, SOURCES_ARGUMENT_HELP, listText, loadOnce, missingPaths, resolveSources } from "./sources.js";

interface ManifestFlags {
  env?: string;
  output: string;
  check?: boolean;
  fetchTimeout: number;
}

/** Where `openfeature generate` and `openfeature pull` look for the manifest unless told otherwise. */
const DEFAULT_OUTPUT = "flags.json";

export function manifestCommand(): Command {
  return new Command("manifest")
    .description("write the OpenFeature CLI's flag manifest of the flag files, for typed accessors (openfeature generate)")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP)
    .option("-e, --env <env>", "the environment to describe (default: the flags every environment defines alike)")
    .option("-o, --output <file>", 'where to write it, "-" for stdout', DEFAULT_OUTPUT)
    .option("--check", "write nothing: exit 1 when the file is not up to date with the flag files (CI)")
    .addOption(
      new Option("--fetch-timeout <seconds>", "a URL fetch with no complete response by then is a problem")
        .argParser(parsePositiveNumber("--fetch-timeout"))
        .default(10),
    )
    .addHelpText("after", MANIFEST_HELP)
    .action(async (args: string[], flags: ManifestFlags, command: Command) => {
      if (flags.check && flags.output === "-") command.error("error: --check compares with a file: give it with -o FILE, not -o -");
      const { specs, bundled } = resolveSources(args);
      const writing = !flags.check && flags.output !== "-";
      const paths = specs.filter((spec) => sourceKindOf(spec) === "files");
      const inside = writing ? await sourceHolding(flags.output, paths) : undefined;
      if (inside !== undefined)
        command.error(
          `error: option '-o, --output <file>' ${flags.output} is inside the source ${inside.source}, which would read it as flags: write it elsewhere (default ${DEFAULT_OUTPUT})`,
        );
      const missing = missingPaths(specs);
      if (missing.length > 0) {
        for (const m of missing) err(`flagserve manifest: ${displayPath(m)}: path does not exist`);
        process.exitCode = 1;
        return;
      }
      // Else a manifest of flags the reader does not have passes for theirs (run in the wrong directory).
      if (bundled)
        err(
          `note: no ./flags here, so this is the bundled example's manifest (${specs[0]}); pass a PATH or create ./flags to describe yours`,
        );
      await runManifest(args, specs, flags);
    });
}

const MANIFEST_HELP = `
Each flag's flagType (boolean, string, integer, float or object; integer when
every number variant is whole), defaultValue (its default variant's value: what
the server answers when no targeting matches) and description (its own
metadata.description). Keys are sorted, so the file diffs well.
Without --env: the flags that every environment defines alike (same type,
default value and description); the others are left out, with a note, and a
flag the environments disagree on is a problem.
Output: the file and one line on stdout ("wrote FILE: ..." or "FILE is up to
date: ..."), or with -o - the manifest on stdout. Problems, what --check finds
different, and a note when there is no ./flags (the bundled example is
described), on stderr.
Exit status: 0 written or up to date, 1 a problem (invalid files, a flag
without a defaultVariant, environments that disagree) or a --check that finds
differences, 2 usage error.

Examples:
  $ npx flagserve manifest --env production          write flags.json
  $ openfeature generate nodejs                      then typed accessors from it
  $ npx flagserve manifest --env production --check  in CI: flags.json up to date?
  $ npx flagserve manifest ./flags -e development -o - | jq '.flags | keys'`;

async function runManifest(args: readonly string[], specs: string[], flags: ManifestFlags): Promise<void> {
  const [{ buildManifest, manifestText }, { formatProblem }] = await Promise.all([
    import("../evaluation/manifest.js"),
    import("../config/index.js"),
  ]);
  const load = await loadOnce(specs, { timeoutMs: flags.fetchTimeout * 1000 });
  const sourcesText = listText(specs.map((spec) => displayPath(spec)));
  const fail = (why: string) => {
    err(`flagserve manifest: ${why}`);
    process.exitCode = 1;
  };
  const printProblems = (names: readonly string[]) => {
    for (const name of names) for (const p of load.problems.get(name) ?? []) err(formatProblem({ ...p, file: displayPath(p.file) }));
  };

  // The environments described: the one asked for, else all; any with a problem is reported, not described.
  let chosen: LoadedEnvironment[];
  if (flags.env !== undefined) {
    const environment = load.problems.has(flags.env) ? undefined : load.environments.get(flags.env);
    if (!environment) {
      printProblems([flags.env, ""]);
      const known = [...load.environments.keys()].join(", ") || "none";
      return fail(
        load.problems.has(flags.env)
          ? `environment '${flags.env}' has problems (listed above); fix them first`
          : `no environment '${flags.env}' in ${sourcesText} (known: ${known})`,
      );
    }
    const elsewhere = [...load.problems.keys()].map((env) => env || "(not tied to an environment)");
    if (elsewhere.length > 0) err(`note: problems in ${elsewhere.join(", ")} (see flagserve validate)`);
    chosen = [environment];
  } else {
    if (load.problems.size > 0) {
      printProblems([...load.problems.keys()]);
      return fail("fix the problems above first, or pass --env for an environment without any");
    }
    if (load.environments.size === 0) return fail(`${sourcesText}: ${NO_ENVIRONMENTS}`);
    chosen = [...load.environments.values()];
  }

  const build = buildManifest(chosen);
  if (!build.manifest) {
    await printManifestProblems(build.problems, load.environments);
    if (build.problems.some((p) => p.kind === "disagree"))
      err("The environments must agree on every flag they share; --env ENV writes the manifest of ENV alone.");
    return fail(`${plural(build.problems.length, "problem")}; ${flags.check ? "nothing checked" : "nothing written"}`);
  }
  if (build.leftOut.size > 0) {
    const which = [...build.leftOut].map(([key, envs]) => `${key} (only in ${envs.join(", ")})`).join(", ");
    err(
      `note: left out ${plural(build.leftOut.size, "flag")} not defined in every environment: ${which}; --env ENV describes all of ENV's`,
    );
  }

  const what = `${plural(Object.keys(build.manifest.flags).length, "flag")} ${chosen.length === 1 ? "of" : "common to"} ${listText(chosen.map((e) => e.config.name))}`;
  const text = manifestText(build.manifest);
  if (flags.output === "-") return out(text.trimEnd());
  const file = displayPath(resolve(flags.output));
  const cause = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  let before: string | undefined;
  try {
    before = await readFile(flags.output, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return fail(`cannot read ${file}: ${cause(error)}`);
  }
  if (flags.check) {
    const differences = before === undefined ? undefined : differencesFrom(before, build.manifest, file);
    if (differences?.length === 0) return out(`${file} is up to date: ${what}`);
    const again = commandLine(args, flags);
    if (differences === undefined) return fail(`${file} does not exist; "${again}" writes it`);
    err(`${file} is not up to date with the flag files (${plural(differences.length, "difference")}):`);
    for (const line of differences) err(`  ${line}`);
    return fail(`"${again}" updates it`);
  }
  if (before === text) return out(`${file} is up to date: ${what}`);
  const { writeFileDurable } = await import("../store/durable-write.js");
  try {
    await writeFileDurable(flags.output, text);
  } catch (error) {
    return fail(`cannot write ${file}: ${cause(error)}`);
  }
  out(`wrote ${file}: ${what}`);
}

/** Each problem at the flag's file:line (found by reading the environment's files again, with positions). */
async function printManifestProblems(problems: readonly ManifestProblem[], environments: ReadonlyMap<string, LoadedEnvironment>) {
  const { locator } = await import("../testing/coverage.js");
  const locators = new Map<string, Awaited<ReturnType<typeof locator>>>();
  for (const problem of problems) {
    const config = environments.get(problem.environment)!.config;
    if (!locators.has(config.name)) locators.set(config.name, await locator(config));
    const { file, line } = locators.get(config.name)!(problem.flag, problem.path);
    const where = file === undefined ? `(${problem.environment})` : `${displayPath(file)}${line === undefined ? "" : `:${line}`}`;
    err(`${where} ${problem.message}`);
  }
}

const shown = (value: unknown): string => {
  const text = value === undefined ? "none" : canonicalJson(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
};

/**
 * What differs between a manifest file's flags and the manifest of the flag files: flags missing
 * on either side, and each flag's flagType, defaultValue and description (data compared, not
 * text: formatting, key order and `$schema` do not count, and an empty description is none, as
 * the OpenFeature CLI reads it). A file that is not JSON, or not a manifest, is one difference
 * saying so.
 */
function differencesFrom(text: string, manifest: Manifest, file: string): string[] {
  let onDisk: unknown;
  try {
    onDisk = JSON.parse(text);
  } catch (error) {
    return [`${file} is not JSON: ${(error as Error).message}`];
  }
  if (!isRecord(onDisk) || !isRecord(onDisk.flags)) return [`${file} is not a flag manifest (no "flags" object)`];
  const written = onDisk.flags;
  const lines: string[] = [];
  const keys = [...new Set([...Object.keys(written), ...Object.keys(manifest.flags)])].sort(compare);
  for (const key of keys) {
    const was = Object.hasOwn(written, key) ? written[key] : undefined;
    const now = Object.hasOwn(manifest.flags, key) ? manifest.flags[key] : undefined;
    if (now === undefined) lines.push(`${key}: in ${file}, no longer in the flag files`);
    else if (was === undefined) lines.push(`${key}: missing from ${file}`);
    else {
      const old = isRecord(was) ? was : {};
      const fields: [string, unknown, unknown][] = [
        ["flagType", old.flagType, now.flagType],
        ["defaultValue", old.defaultValue, now.defaultValue],
        ["description", old.description === "" ? undefined : old.description, now.description],
      ];
      for (const [field, before, after] of fields)
        if (canonicalJson(before) !== canonicalJson(after))
          lines.push(`${key}: ${field} ${shown(before)} in ${file}, ${shown(after)} in the flag files`);
    }
  }
  return lines;
}

/** The command that writes the manifest checked: this one without --check, started as the reader can from here (`npx flagserve`...). */
function commandLine(args: readonly string[], flags: ManifestFlags): string {
  const words = ["manifest", ...args];
  if (flags.env !== undefined) words.push("--env", flags.env);
  if (flags.output !== DEFAULT_OUTPUT) words.push("-o", flags.output);
  return `${invocation()} ${words.map(shellWord).join(" ")}`;
}
