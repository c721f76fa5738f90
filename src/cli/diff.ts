/** `flagserve diff OLD NEW`, `flagserve diff --git REV [SOURCE...]`: what a change to the flag files does. */
import { Command, Option } from "commander";
import { displayPath, err, out } from "./paths.js";
import { missingPaths, resolveSources } from "./sources.js";
import type { DiffFormat } from "../review/format.js";

interface DiffFlags {
  git?: string;
  format: DiffFormat;
  exitCode?: boolean;
  tests?: boolean;
}

export function diffCommand(): Command {
  return new Command("diff")
    .description(
      "compare two configurations per environment: flags added, removed and changed, segments, keys, and the events a running server would send",
    )
    .argument("[sources...]", "OLD NEW (directories, files or URLs); with --git, the sources to compare (default: ./flags)")
    .option("-g, --git <rev>", "compare the sources with their content at this git revision (no checkout), e.g. origin/main")
    .addOption(new Option("-f, --format <format>", "output format").choices(["text", "markdown", "json"]).default("text"))
    .option("--exit-code", "exit 1 when there are changes (as `git diff --exit-code`)")
    .option("--tests", "also run the test cases (*.test.yaml beside NEW) of the flags whose answers may change")
    .addHelpText("after", DIFF_HELP)
    .action(async (args: string[], flags: DiffFlags, command: Command) => {
      if (flags.git === undefined && args.length !== 2) command.error("error: give OLD and NEW, or --git REV [SOURCE...]");
      const after = flags.git === undefined ? [args[1]!] : resolveSources(args).specs;
      const missing = missingPaths(flags.git === undefined ? args : after);
      if (missing.length > 0) {
        for (const m of missing) err(`flagserve diff: ${displayPath(m)}: path does not exist`);
        process.exitCode = 2;
        return;
      }
      const { diffConfigurations, GitError, formatDiff } = await import("../review/index.js");
      let report;
      try {
        report = await diffConfigurations({
          ...(flags.git === undefined ? { before: args[0]! } : { git: flags.git }),
          after,
          tests: flags.tests === true,
        });
      } catch (error) {
        if (!(error instanceof GitError)) throw error;
        err(`flagserve diff: ${error.message}`);
        process.exitCode = 2;
        return;
      }
      out(formatDiff(flags.format, report));
      const tests = report.tests;
      process.exitCode = tests && tests.problems.length > 0 ? 2 : tests && tests.failed > 0 ? 1 : flags.exitCode && report.changed ? 1 : 0;
    });
}

const DIFF_HELP = `
Per environment: flags added, removed and changed (state, defaultVariant, variants, targeting,
metadata), segments changed and the flags they affect, API key changes (never the key),
notification changes, and the events a running server sends for the change (the server's own
diff). Problems in NEW are listed; a running server would keep its last good configuration.
--format json: {"changed","environments":[{"environment","status","added","removed",
"changed":[{"flag","fields"}],"segments","events",...}],"tests"?} on stdout.

Exit status: 0 (with --exit-code: 0 no changes, 1 changes); with --tests, 1 when a case fails;
2 usage error, a path or git revision that does not exist.

Examples:
  $ npx flagserve diff old-flags flags
  $ npx flagserve diff --git origin/main                  ./flags against origin/main
  $ npx flagserve diff --git "$(git merge-base origin/main HEAD)" --format markdown > flag-changes.md
  $ npx flagserve diff --git origin/main --tests          and rerun the cases of the changed flags`;
