/** `flagserve eval FLAG --env ENV [--context JSON] [PATH]`: the single-flag API, without a server. */
import { readFile } from "node:fs/promises";
import { Command } from "commander";
import type { ErrorBody } from "../evaluation/problem.js";
import { PATH_ARGUMENT_HELP, displayPath, err, out, resolveConfigPath } from "./paths.js";
import { loadOnce } from "./sources.js";

interface EvalFlags {
  env: string;
  context?: string;
}

/** `--context` text: JSON inline, `@file` to read a file, `@-` for standard input. */
async function contextText(value: string): Promise<string> {
  if (!value.startsWith("@")) return value;
  const file = value.slice(1);
  if (file === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }
  return readFile(file, "utf8");
}

/** The request body the HTTP route would get: `{context}` from `--context`, or the error a bad one is. */
function requestBody(key: string, contextJson: string | undefined): { body: unknown } | ErrorBody {
  if (contextJson === undefined) return { body: undefined };
  try {
    return { body: { context: JSON.parse(contextJson) as unknown } };
  } catch (error) {
    return { key, errorCode: "INVALID_CONTEXT", errorDetails: `--context is not valid JSON: ${(error as Error).message}` };
  }
}

export function evalCommand(): Command {
  return new Command("eval")
    .description("evaluate one flag without a server; prints the JSON that POST /ofrep/v1/evaluate/flags/{key} would return")
    .argument("<flag>", "the flag key")
    .argument("[path]", PATH_ARGUMENT_HELP)
    .requiredOption("-e, --env <env>", "the environment to evaluate in (what the API key selects over HTTP)")
    .option("-c, --context <json>", "the evaluation context: a JSON object, @file to read one, @- for stdin (default: {})")
    .addHelpText(
      "after",
      `
Output: the response body on stdout, exactly as the HTTP API sends it:
  success   {"key","value","reason","variant","metadata"}            exit 0
  error     {"key","errorCode","errorDetails","metadata"}           exit 1 (HTTP 400)
  not found {"key","errorCode":"FLAG_NOT_FOUND","errorDetails"}     exit 1 (HTTP 404)
  bad JSON  {"key","errorCode":"INVALID_CONTEXT","errorDetails"}    exit 1 (HTTP 400)
An unknown environment or an invalid configuration: a message on stderr, exit 1.

Examples:
  $ npx flagserve eval new-checkout --env development
  $ npx flagserve eval banner-color --env production --context '{"targetingKey":"user-42"}'
  $ npx flagserve eval new-checkout -e development -c '{"email":"ann@example.com"}' ./flags
  $ npx flagserve eval banner-color -e production -c @context.json | jq -r .value`,
    )
    .action(async (key: string, pathArg: string | undefined, flags: EvalFlags, command: Command) => {
      let contextJson: string | undefined;
      try {
        contextJson = flags.context === undefined ? undefined : await contextText(flags.context);
      } catch (error) {
        command.error(
          `error: option '-c, --context <json>' cannot read ${flags.context}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
      const [{ formatProblem }, { evaluateFlag }] = await Promise.all([
        import("../config/index.js"),
        import("../evaluation/ofrep-bodies.js"),
      ]);
      const { path } = resolveConfigPath(pathArg);
      const load = await loadOnce([path]);
      // An environment with any problem is reported, not evaluated (even if the server would serve the rest of it).
      const environment = load.problems.has(flags.env) ? undefined : load.environments.get(flags.env);
      if (!environment) {
        const problems = [...(load.problems.get(flags.env) ?? []), ...(load.problems.get("") ?? [])];
        for (const p of problems) err(formatProblem({ ...p, file: displayPath(p.file) }));
        const known = [...load.environments.keys()].join(", ") || "none";
        const why = load.problems.has(flags.env)
          ? `environment '${flags.env}' has problems (listed above); fix them first`
          : `no environment '${flags.env}' in ${displayPath(path)} (known: ${known})`;
        err(`flagserve eval: ${why}`);
        process.exitCode = 1;
        return;
      }

      const elsewhere = [...load.problems.keys()].map((env) => env || "(not tied to an environment)");
      if (elsewhere.length > 0)
        err(`note: the server would not start without --allow-invalid: problems in ${elsewhere.join(", ")} (see flagserve validate)`);

      const request = requestBody(key, contextJson);
      const { status, body } = "errorCode" in request ? { status: 400, body: request } : evaluateFlag(environment.flags, key, request.body);
      out(JSON.stringify(body));
      if (status !== 200) process.exitCode = 1;
    });
}
