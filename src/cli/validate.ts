/** `flagserve validate [PATH]`: every check the server makes at load time, without serving. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Command, Option } from "commander";
import type { Problem } from "../config/types.js";
import { PATH_ARGUMENT_HELP, displayPath, err, out, plural, resolveConfigPath } from "./paths.js";

interface ValidateFlags {
  format: "text" | "json";
}

/** `--format json`: one object on stdout. */
export interface ValidateReport {
  valid: boolean;
  path: string;
  environments: (
    | { name: string; valid: true; files: string[]; flags: string[]; segments: string[] }
    | { name: string; valid: false; files: string[] }
  )[];
  problems: Problem[];
}

export function validateCommand(): Command {
  return new Command("validate")
    .description("check flag files as the server would (YAML, schema, targeting, $refs, keys) and report file:line:col")
    .argument("[path]", PATH_ARGUMENT_HELP)
    .addOption(new Option("--format <format>", "output format").choices(["text", "json"]).default("text"))
    .addHelpText(
      "after",
      `
Output:
  text: each problem as "file:line:col message" on stderr, or one summary line on stdout
  json: {"valid":bool,"path":...,"environments":[{"name","valid","files","flags","segments"}],
         "problems":[{"file","line","col","message"}]} on stdout (absolute file paths)
Exit status: 0 valid, 1 any problem, 2 usage error.

Examples:
  $ flagserve validate                      check ./flags
  $ flagserve validate config/flags.yaml    check one file
  $ flagserve validate --format json | jq '.problems[]'

  pre-commit (.git/hooks/pre-commit or a lefthook/husky step):
    npx --no-install flagserve validate flags`,
    )
    .action(async (pathArg: string | undefined, flags: ValidateFlags) => {
      const { loadConfig } = await import("../config/index.js");
      const { path } = resolveConfigPath(pathArg);
      if (!existsSync(path)) {
        // Not a problem inside a file (no line:col to show): the PATH itself is wrong.
        const message = "path does not exist";
        if (flags.format === "json") {
          const report: ValidateReport = { valid: false, path, environments: [], problems: [{ file: resolve(path), line: 0, col: 0, message }] };
          out(JSON.stringify(report));
        } else err(`flagserve validate: ${displayPath(path)}: ${message}`);
        process.exitCode = 1;
        return;
      }
      const load = await loadConfig(path);
      const problems = [...load.problems.values()].flat();
      // The server would start and serve nothing: for a lint that is a wrong PATH, not a success.
      if (problems.length === 0 && load.environments.size === 0) {
        problems.push({ file: resolve(path), line: 0, col: 0, message: "no environments found (expected *.yaml, *.yml or *.json files, or subdirectories)" });
      }
      const report: ValidateReport = { valid: problems.length === 0, path, environments: [], problems };
      for (const [name, { config, flags: compiled }] of load.environments) {
        // An environment whose only problems are inside flags would be served (with
        // --allow-invalid), but for a lint it is not valid.
        if (load.problems.has(name)) continue;
        report.environments.push({ name, valid: true, files: config.files, flags: [...compiled.keys()], segments: Object.keys(config.segments) });
      }
      for (const [name, list] of load.problems) {
        if (name !== "") report.environments.push({ name, valid: false, files: [...new Set(list.map((p) => p.file))] });
      }
      report.environments.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      if (!report.valid) process.exitCode = 1;

      if (flags.format === "json") {
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
      out(`ok: ${displayPath(path)} has ${plural(envs.length, "valid environment")}: ${envs.join(", ")}`);
    });
}
