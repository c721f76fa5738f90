/** `flagserve test [SOURCE...]`: run the test cases of the flag files, without a server. */
import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { open } from "node:fs/promises";
import { finished } from "node:stream/promises";
import { Command, InvalidArgumentError, Option } from "commander";
import { parseContextPairs } from "./options.js";
import { displayPath, err, out, outText } from "./paths.js";
import { SOURCES_ARGUMENT_HELP, missingPaths, resolveSources } from "./sources.js";
import type { Reporter } from "../testing/reporters.js";

interface TestFlags {
  tests?: string[];
  reporter: Reporter;
  output?: string;
  coverage?: boolean;
  coverageMin?: number;
  contextValue?: Record<string, string>;
  overrides?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const parsePercent = (value: string): number => {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 100) throw new InvalidArgumentError("must be a percentage from 0 to 100");
  return n;
};

export function testCommand(): Command {
  return new Command("test")
    .description("run the test cases of the flag files (<environment>.test.yaml): evaluate flags for contexts and check the answers")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP)
    .option(
      "-t, --tests <path>",
      "a test file, or a directory of *.test.yaml files (repeatable; default: the *.test.yaml files beside the flag files)",
      collect,
    )
    .addOption(new Option("-r, --reporter <reporter>", "report format").choices(["human", "junit", "json"]).default("human"))
    .option("-o, --output <file>", "write the report to this file (a summary line still goes to stdout)")
    .option("--coverage", "report the targeting branches (if branches, fractional buckets, defaults) no case reached, by file:line")
    .addOption(new Option("--coverage-min <percent>", "fail when coverage is below this (implies --coverage)").argParser(parsePercent))
    .option(
      "--context-value <key=value>",
      "add a static value to every context, as `serve --context-value` does (repeatable)",
      parseContextPairs("values"),
    )
    .option("--overrides <file>", "apply the overrides kept in this file (`serve --overrides`); the file is only read")
    .addHelpText("after", TEST_HELP)
    .action(async (args: string[], flags: TestFlags) => {
      const { specs } = resolveSources(args);
      const missing = missingPaths(specs);
      if (missing.length > 0) {
        for (const m of missing) err(`flagserve test: ${displayPath(m)}: path does not exist`);
        process.exitCode = 2;
        return;
      }
      const [{ testFlags, testExitCode }, { coverageLine, reportWriter, summaryLine }] = await Promise.all([
        import("../testing/index.js"),
        import("../testing/reporters.js"),
      ]);
      const coverage = flags.coverage === true || flags.coverageMin !== undefined;
      // Written as the run goes, to the file or stdout: no check's result is kept.
      let file: WriteStream | undefined;
      let writeError: unknown;
      const cannotWrite = (error: unknown) => {
        err(
          `flagserve test: cannot write ${displayPath(flags.output!)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
        process.exitCode = 2;
      };
      if (flags.output !== undefined) {
        try {
          file = (await open(flags.output, "w")).createWriteStream();
        } catch (error) {
          return cannotWrite(error);
        }
        file.on("error", (error) => (writeError ??= error));
      }
      const toFile = (stream: WriteStream) => (text: string) =>
        stream.write(text) ? undefined : once(stream, "drain").then(() => undefined);
      const writer = reportWriter(flags.reporter, file ? toFile(file) : outText);
      const report = await testFlags({
        sources: specs,
        ...(flags.tests && { tests: flags.tests }),
        coverage,
        ...(flags.contextValue && { contextValues: flags.contextValue }),
        ...(flags.overrides && { overridesFile: flags.overrides }),
        onResult: writer.result,
      });
      writer.end(report);
      const code = testExitCode(report, flags.coverageMin);
      if (file && flags.output) {
        await finished(file.end()).catch((error: unknown) => (writeError ??= error));
        if (writeError !== undefined) return cannotWrite(writeError);
        out(`${summaryLine(report)}${report.coverage ? `; ${coverageLine(report.coverage)}` : ""}; report in ${displayPath(flags.output)}`);
      }
      if (code === 1 && flags.coverageMin !== undefined && report.failed === 0 && report.problems.length === 0) {
        err(`flagserve test: coverage ${report.coverage?.percent}% is below --coverage-min ${flags.coverageMin}%`);
      }
      process.exitCode = code;
    });
}

const TEST_HELP = `
Test files: <environment>.test.yaml beside the environment's flag file (never read as an
environment), or any file given with --tests. Schema: schema/flagserve-test.schema.json.

  environment: development            # optional when the file name says it
  tests:
    - name: beta testers get the new checkout
      flag: new-checkout
      context: { targetingKey: user-1, email: ada@example.com }
      expect: { variant: "on", reason: TARGETING_MATCH }
    - name: everyone else keeps the old one
      flag: new-checkout
      contexts:                         # the same expectation for each row
        - { targetingKey: user-2, email: bob@example.org }
        - { targetingKey: user-3 }
      expect: { variant: "off", reason: DEFAULT }

Exit status: 0 all cases pass, 1 a case fails (or coverage is below --coverage-min),
2 usage error, a test file that cannot be read, or a case naming an unknown flag or environment.
A run makes at most 100 000 checks (a flag for a context of a case; a table of contexts counts
each time an alias repeats it): test files expanding past that are an error (exit 2) at the case
where they do. The report is written as the checks run.

Examples:
  $ npx flagserve test                                  the cases beside ./flags
  $ npx flagserve test --coverage --coverage-min 80
  $ npx flagserve test flags --reporter junit --output flag-tests.xml
  $ npx flagserve test --tests checks/release.test.yaml --context-value region=eu`;
