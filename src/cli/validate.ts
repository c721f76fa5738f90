/** `flagserve validate [SOURCE...]`: every check the server makes at load time, without serving. */
import { resolve } from "node:path";
import { Command, Option } from "commander";
import type { Problem } from "../model/types.js";
import { sourceKindOf } from "../sources/source.js";
import { parsePositiveNumber } from "./options.js";
import { displayPath, err, out, plural } from "./paths.js";
import { NO_ENVIRONMENTS, SOURCES_ARGUMENT_HELP, listText, loadOnce, missingPaths, resolveSources } from "./sources.js";

interface ValidateFlags {
  format: "text" | "json";
  fetchTimeout: number;
}

/** `--format json`: one object on stdout. */
export interface ValidateReport {
  valid: boolean;
  /** The sources, as one text ("a, b and c"). */
  path: string;
  sources: string[];
  environments: (
    { name: string; valid: true; files: string[]; flags: string[]; segments: string[] } | { name: string; valid: false; files: string[] }
  )[];
  problems: Problem[];
}

export function validateCommand(): Command {
  return new Command("validate")
    .description("check flag files and URLs as the server would (YAML, schema, targeting, $refs, keys) and report file:line:col")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP)
    .addOption(new Option("--format <format>", "output format").choices(["text", "json"]).default("text"))
    .addOption(
      new Option("--fetch-timeout <seconds>", "a URL fetch with no complete response by then is a problem")
        .argParser(parsePositiveNumber("--fetch-timeout"))
        .default(10),
    )
    .addHelpText("after", VALIDATE_HELP)
    .action(async (args: string[], flags: ValidateFlags) => {
      const { specs } = resolveSources(args);
      const missing = missingPaths(specs);
      if (missing.length > 0) reportMissing(specs, missing, flags.format);
      else printReport(await check(specs, flags), flags.format);
    });
}

const VALIDATE_HELP = `
Output:
  text: each problem as "file:line:col message" on stderr, or one summary line on stdout
  json: {"valid":bool,"path":...,"sources":[...],"environments":[{"name","valid","files","flags","segments"}],
         "problems":[{"file","line","col","message"}]} on stdout (absolute file paths, URLs as given)
A URL is fetched once; a failed fetch (status, network, timeout) is a problem at the URL.
Exit status: 0 valid, 1 any problem, 2 usage error.

Examples:
  $ npx flagserve validate                      check ./flags
  $ npx flagserve validate config/flags.yaml    check one file
  $ npx flagserve validate ./flags https://config.example/flags/staging.yaml
  $ npx flagserve validate --format json | jq '.problems[]'

  pre-commit (.git/hooks/pre-commit or a lefthook/husky step):
    npx --no-install flagserve validate flags`;

/** Not a problem inside a file (no line:col to show): the PATH itself is wrong. */
function reportMissing(specs: string[], missing: string[], format: ValidateFlags["format"]): void {
  const message = "path does not exist";
  if (format === "json") {
    const problems = missing.map((m) => ({ file: resolve(m), line: 0, col: 0, message }));
    const report: ValidateReport = { valid: false, path: listText(specs), sources: specs, environments: [], problems };
    out(JSON.stringify(report));
  } else for (const m of missing) err(`flagserve validate: ${displayPath(m)}: ${message}`);
  process.exitCode = 1;
}

/** Loads the sources once, as the server would, and says what is valid. */
async function check(specs: string[], flags: ValidateFlags): Promise<ValidateReport> {
  const path = listText(specs);
  const load = await loadOnce(specs, { timeoutMs: flags.fetchTimeout * 1000 });
  const problems = [...load.problems.values()].flat();
  // The server would start and serve nothing: for a lint that is a wrong PATH, not a success.
  if (problems.length === 0 && load.environments.size === 0) {
    const file = specs.length === 1 && sourceKindOf(specs[0]!) !== "url" ? resolve(specs[0]!) : path;
    problems.push({ file, line: 0, col: 0, message: NO_ENVIRONMENTS });
  }
  // Test files (`<environment>.test.yaml`) must parse and name existing environments and flags.
  const { checkTestFiles } = await import("../testing/index.js");
  problems.push(...(await checkTestFiles(specs, load)));
  const report: ValidateReport = { valid: problems.length === 0, path, sources: specs, environments: [], problems };
  for (const [name, { config, flags: compiled }] of load.environments) {
    // An environment whose only problems are inside flags would be served (with
    // --allow-invalid), but for a lint it is not valid.
    if (load.problems.has(name)) continue;
    report.environments.push({
      name,
      valid: true,
      files: config.files,
      flags: [...compiled.keys()],
      segments: Object.keys(config.segments),
    });
  }
  for (const [name, list] of load.problems) {
    if (name !== "") report.environments.push({ name, valid: false, files: [...new Set(list.map((p) => p.file))] });
  }
  report.environments.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return report;
}

/** The report as JSON, or its problems on stderr, or one summary line on stdout; exit code 1 when not valid. */
function printReport(report: ValidateReport, format: ValidateFlags["format"]): void {
  const { problems } = report;
  if (!report.valid) process.exitCode = 1;
  if (format === "json") {
    out(JSON.stringify(report));
    return;
  }
  if (!report.valid) {
    for (const p of problems) err(`${displayPath(p.file)}:${p.line}:${p.col} ${p.message}`);
    const files = new Set(problems.map((p) => p.file)).size;
    const invalid = report.environments.filter((e) => !e.valid).map((e) => e.name);
    err(`${plural(problems.length, "problem")} in ${plural(files, "file")}${invalid.length ? ` (invalid: ${invalid.join(", ")})` : ""}`);
    return;
  }
  const envs = report.environments.map((e) => `${e.name} (${e.valid ? plural(e.flags.length, "flag") : "invalid"})`);
  out(`ok: ${displayPath(report.path)} has ${plural(envs.length, "valid environment")}: ${envs.join(", ")}`);
}
