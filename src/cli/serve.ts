/** `flagserve [serve] [PATH]`: load, listen, print where and with which keys, stop cleanly. */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { formatProblem } from "../config/types.js";
import { PortInUseError } from "../http/listen.js";
import { createLogger } from "../log.js";
import { InvalidConfigError, startServer } from "../server.js";
import { parseByteSize, parseNonNegativeNumber, parsePort, parsePositiveInteger } from "./options.js";

export const BUNDLED_EXAMPLE = fileURLToPath(new URL("../../flags.example.yaml", import.meta.url));

interface ServeFlags {
  port: number;
  host?: string;
  stateDir?: string;
  allowInvalid: boolean;
  watch: boolean;
  heartbeat?: number;
  eventSet: "primary" | "variant";
  corsOrigin: string;
  clientIpHeader?: string;
  maxStreamsPerIp?: number;
  keyGrace: number;
  maxBody: number;
  https: boolean;
  public: boolean;
  quiet: boolean;
  jsonLogs: boolean;
}

/** PATH, else `./flags`, else the bundled example (so the first run always serves something). */
export function resolveConfigPath(path: string | undefined): { path: string; bundled: boolean } {
  if (path !== undefined) return { path, bundled: false };
  if (existsSync("flags")) return { path: "flags", bundled: false };
  return { path: BUNDLED_EXAMPLE, bundled: true };
}

export function serveCommand(): Command {
  return new Command("serve")
    .description("serve flag files over OFREP (the default command)")
    .argument("[path]", "directory of environment files, or one file (default: ./flags, else the bundled example)")
    .addOption(new Option("-p, --port <port>", "port to listen on; 0 = any free port").argParser(parsePort).default(8080))
    .option("--host <host>", "interface to listen on (default: 127.0.0.1; 0.0.0.0 with --public)")
    .option("--no-watch", "do not watch the files for changes")
    .addOption(new Option("--heartbeat <seconds>", "heartbeat interval on event streams (default: 15, or 30 with --event-set variant)").argParser(parseNonNegativeNumber("--heartbeat")))
    .addOption(new Option("--event-set <set>", "event names on /api/v1/flags/events").choices(["primary", "variant"]).default("primary"))
    .option("--cors-origin <origin>", "allowed CORS origin(s), comma-separated", "*")
    .option("--client-ip-header <name>", "take the client address from this header (e.g. X-Forwarded-For) behind a proxy")
    .addOption(new Option("--max-streams-per-ip <n>", "most event streams one client address may hold open").argParser(parsePositiveInteger("--max-streams-per-ip")))
    .addOption(new Option("--key-grace <seconds>", "how long a replaced API key keeps working").argParser(parseNonNegativeNumber("--key-grace")).default(0))
    .option("--state-dir <dir>", "where generated API keys are kept (default: .flagserve beside the configuration)")
    .option("--allow-invalid", "serve the valid environments even when others have errors", false)
    .addOption(new Option("--max-body <size>", "largest request body accepted (e.g. 64kb, 1mb)").argParser(parseByteSize).default(1024 * 1024, "1mb"))
    .option("--https", "serve HTTPS with a generated self-signed certificate", false)
    .option("--public", "listen on all interfaces and show the network URL and a QR code (for demos on other devices)", false)
    .option("-q, --quiet", "print only the ready line and errors", false)
    .option("--json-logs", "write all output as JSON lines", false)
    .addHelpText(
      "after",
      `
Examples:
  $ flagserve                          serve ./flags, or the bundled example
  $ flagserve ./flags --port 0         any free port; read the URL from the "ready" line
  $ flagserve flags.yaml --no-watch     CI fixture: load once, never reload
  $ flagserve --public --https         demo on a phone on the same network`,
    )
    .action(async (pathArg: string | undefined, flags: ServeFlags) => {
      await runServe(pathArg, flags);
    });
}

async function runServe(pathArg: string | undefined, flags: ServeFlags): Promise<void> {
  const logger = createLogger(flags.jsonLogs ? "json" : "text");
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const { path, bundled } = resolveConfigPath(pathArg);
  const corsOrigin = flags.corsOrigin === "*" ? "*" : flags.corsOrigin.split(",").map((o) => o.trim());

  let server;
  try {
    server = await startServer({
      source: { path },
      port: flags.port,
      host: flags.host ?? (flags.public ? "0.0.0.0" : "127.0.0.1"),
      stateDir: flags.stateDir,
      allowInvalid: flags.allowInvalid,
      watch: flags.watch,
      heartbeatSeconds: flags.heartbeat,
      eventSet: flags.eventSet,
      corsOrigin,
      clientIpHeader: flags.clientIpHeader,
      maxStreamsPerIp: flags.maxStreamsPerIp,
      keyGraceSeconds: flags.keyGrace,
      maxBodyBytes: flags.maxBody,
      https: flags.https,
      public: flags.public,
      logger,
    });
  } catch (error) {
    if (error instanceof InvalidConfigError) {
      for (const problem of error.problems) logger.error(formatProblem(problem));
      logger.error(`not serving: ${error.problems.length} problem(s) in ${path} (use --allow-invalid to serve the valid environments)`);
      process.exitCode = 1;
      return;
    }
    if (error instanceof PortInUseError) {
      logger.error(error.message);
      process.exitCode = 1;
      return;
    }
    throw error;
  }

  // Before the ready line: whoever waits for it may signal us straight away.
  const running = server;
  const stop = async () => {
    await running.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void stop());
  process.once("SIGTERM", () => void stop());

  if (!flags.quiet) {
    out(`flagserve serving ${path}${bundled ? " (the bundled example; pass a PATH or create ./flags to serve your own)" : ""}`);
    out(`  ${server.url}`);
    const keys = server.keys();
    const width = Math.max(...Object.keys(keys).map((k) => k.length));
    for (const [env, key] of Object.entries(keys)) out(`  environment ${env.padEnd(width)}  key ${key}`);
  }
  out(`ready ${server.url}`);

}
