/**
 * `flagserve health [URL]`: is a flagserve ready? What a CI script runs after starting one in the
 * background, and what a container HEALTHCHECK runs where there is no curl. Exit 0 ready, 1 not
 * ready or unreachable (after `--wait`), 2 usage error.
 */
import { Argument, Command, Option } from "commander";
import { parseNonNegativeNumber, serverUrl } from "./options.js";
import { err, out } from "./paths.js";

export const DEFAULT_HEALTH_URL = "http://127.0.0.1:8080";
const POLL_MS = 250;
const ATTEMPT_TIMEOUT_MS = 5_000;

interface HealthFlags {
  wait: number;
  quiet?: boolean;
  insecure?: boolean;
}

/** The probe's URL: `/readyz` under the given base (a path prefix, as behind a proxy, is kept). */
export function readyzUrl(value: string): string {
  const url = serverUrl(value, "/readyz");
  url.search = "";
  url.hash = "";
  return url.toString();
}

type Probe = { ready: true; status: string; environments: number } | { ready: false; reason: string };

/** One request to /readyz: ready when it answers 200 (`ready`, or `degraded`: serving with problems). */
async function probe(url: string, timeoutMs: number): Promise<Probe> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, timeoutMs)) });
    const body = (await response.json().catch(() => ({}))) as { status?: unknown; environments?: unknown };
    const status = typeof body.status === "string" ? body.status : `HTTP ${response.status}`;
    if (response.status === 200 && (status === "ready" || status === "degraded")) {
      return { ready: true, status, environments: typeof body.environments === "number" ? body.environments : 0 };
    }
    return { ready: false, reason: status };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const name = (error as Error).name;
    return {
      ready: false,
      reason: name === "TimeoutError" ? "no answer in time" : (cause?.code ?? cause?.message ?? (error as Error).message),
    };
  }
}

/**
 * Asks until ready or `waitSeconds` have passed (one attempt when 0); returns the exit code.
 * `target` may be looked up again before each attempt (a server started at the same moment
 * records its URL once it listens).
 */
export async function checkHealth(target: string | (() => Promise<string>), flags: HealthFlags): Promise<number> {
  const deadline = Date.now() + flags.wait * 1000;
  for (;;) {
    const url = typeof target === "string" ? target : await target();
    const left = deadline - Date.now();
    const result = await probe(url, flags.wait > 0 ? Math.min(ATTEMPT_TIMEOUT_MS, left) : ATTEMPT_TIMEOUT_MS);
    if (result.ready) {
      if (!flags.quiet) out(`${result.status} ${url} (${result.environments} environment${result.environments === 1 ? "" : "s"})`);
      return 0;
    }
    if (Date.now() + POLL_MS >= deadline) {
      if (!flags.quiet) err(`not ready: ${url}: ${result.reason}${flags.wait > 0 ? ` (waited ${flags.wait} s)` : ""}`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The URL the default configuration's running server recorded (docs/state.md; the newest of several), else the default. */
async function recordedUrl(): Promise<string> {
  const { recordedServerUrl } = await import("./admin-client.js");
  return (await recordedServerUrl()) ?? DEFAULT_HEALTH_URL;
}

export function healthCommand(): Command {
  return new Command("health")
    .description("exit 0 when a flagserve answers /readyz as ready, 1 when it does not (e.g. a CI step or a container HEALTHCHECK)")
    .addArgument(
      new Argument("[url]", `the server (default: the one recorded in the state directory, else ${DEFAULT_HEALTH_URL})`).argParser(
        readyzUrl,
      ),
    )
    .addOption(
      new Option("--wait <seconds>", "keep asking until ready or this many seconds have passed")
        .argParser(parseNonNegativeNumber("--wait"))
        .default(0, "0, ask once"),
    )
    .option("-q, --quiet", "print nothing; the exit status says it")
    .option("--insecure", "accept any TLS certificate (a server started with --https uses a self-signed one)")
    .addHelpText(
      "after",
      `
Ready means /readyz answers 200: status "ready", or "degraded" (serving, with problems in a file).
Exit status: 0 ready, 1 not ready or unreachable, 2 usage error.

Examples:
  $ npx flagserve ./flags --port 8080 & npx flagserve health --wait 30     CI: start, then wait until it serves
  HEALTHCHECK CMD ["flagserve", "health", "http://127.0.0.1:8080"]  container probe without curl`,
    )
    .action(async (url: string | undefined, flags: HealthFlags) => {
      if (flags.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
      const { StateDirError } = await import("../store/state-dir.js");
      try {
        process.exitCode = await checkHealth(url ?? (async () => readyzUrl(await recordedUrl())), flags);
      } catch (error) {
        if (!(error instanceof StateDirError)) throw error;
        err(`flagserve health: ${error.message}`);
        process.exitCode = 1;
      }
    });
}
