/** `flagserve [serve] [SOURCE...]`: load, listen, print where and with which keys, stop cleanly. */
import { existsSync } from "node:fs";
import { Command, Option } from "commander";
import type { Problem } from "../model/types.js";
import { createLogger, flushLog, formatRecord, type LogFormat, type Logger } from "../log/logger.js";
import { DEFAULT_KEY_GRACE_SECONDS } from "../store/key-grace.js";
import { npmLaunchers, watchProcesses } from "./launcher.js";
import { networkUrls, localUrl, qrCode } from "./network.js";
import { parseByteSize, parseContextPairs, parseFaults, parseNonNegativeNumber, parsePort, parsePositiveInteger, parsePositiveNumber } from "./options.js";
import { STATE_DIR_HELP, VERSION, plural } from "./paths.js";
import { SOURCES_ARGUMENT_HELP, listText, missingPaths, resolveSources } from "./sources.js";
import type { FaultRule } from "../fixture/fault-rules.js";

interface ServeFlags {
  port: number;
  host?: string;
  stateDir?: string;
  allowInvalid?: boolean;
  watch: boolean;
  pollInterval: number;
  fetchTimeout: number;
  heartbeat?: number;
  eventSet: "primary" | "variant";
  corsOrigin: string;
  clientIpHeader?: string;
  maxStreamsPerIp?: number;
  keyGrace: number;
  maxBody: number;
  https?: boolean;
  public?: boolean;
  quiet?: boolean;
  jsonLogs?: boolean;
  contextValue?: Record<string, string>;
  contextFromHeader?: Record<string, string>;
  fault?: FaultRule[];
  admin: boolean;
  adminToken?: string;
  adminHost?: string[];
  overrides?: string;
  flagdPort?: number;
  flagdSelectorByName?: string[];
}

export function serveCommand(): Command {
  const serve = new Command("serve")
    .description("serve flag files and URLs over OFREP, reloading on every change (the default command)")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP);
  for (const addOptions of [listenOptions, sourceOptions, streamOptions, loadOptions, fixtureOptions, networkOptions, adminOptions, flagdOptions, outputOptions]) {
    addOptions(serve);
  }
  return serve.addHelpText("after", SERVE_HELP).action(async (args: string[], flags: ServeFlags, command: Command) => {
    rejectCommandTypo(args, command);
    await runServe(args, flags);
  });
}

/** Where to listen. */
function listenOptions(command: Command): Command {
  return command
    .addOption(new Option("-p, --port <port>", "port to listen on; 0 = any free port").argParser(parsePort).default(8080))
    .option("--host <host>", "interface to listen on (default: 127.0.0.1; 0.0.0.0 with --public)");
}

/** Following the sources: watching files, polling URLs. */
function sourceOptions(command: Command): Command {
  return command
    .option("--no-watch", "do not watch the files for changes, nor poll the URLs")
    .addOption(
      new Option("--poll-interval <seconds>", "how often each URL source is fetched again (a conditional GET)")
        .argParser(parsePositiveNumber("--poll-interval"))
        .default(5),
    )
    .addOption(
      new Option("--fetch-timeout <seconds>", "a URL fetch with no complete response by then is a problem")
        .argParser(parsePositiveNumber("--fetch-timeout"))
        .default(10),
    );
}

/** Event streams and the clients of the HTTP API. */
function streamOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--heartbeat <seconds>", "heartbeat interval on event streams (default: 15, or 30 with --event-set variant)").argParser(
        parseNonNegativeNumber("--heartbeat"),
      ),
    )
    .addOption(new Option("--event-set <set>", "event names on /api/v1/flags/events").choices(["primary", "variant"]).default("primary"))
    .option("--cors-origin <origin>", "allowed CORS origin(s), comma-separated", "*")
    .option("--client-ip-header <name>", "take the client address from this header (e.g. X-Forwarded-For) behind a proxy")
    .addOption(
      new Option("--max-streams-per-ip <n>", "most event streams one client address may hold open").argParser(
        parsePositiveInteger("--max-streams-per-ip"),
      ),
    );
}

/** Keys, the state directory, what a problem costs, request size. */
function loadOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--key-grace <seconds>", "how long a replaced API key keeps working (keys rotate --revoke-now: not at all)")
        .argParser(parseNonNegativeNumber("--key-grace"))
        .default(DEFAULT_KEY_GRACE_SECONDS),
    )
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .option("--allow-invalid", "serve despite problems: broken flags answer PARSE_ERROR, broken environments are left out")
    .addOption(
      new Option("--max-body <size>", "largest request body accepted (e.g. 64kb, 1mb)").argParser(parseByteSize).default(1024 * 1024, "1mb"),
    );
}

/** Test-fixture behaviour: context values and headers, injected faults. */
function fixtureOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--context-value <key=value>", "add a string value to every evaluation context, as flagd -X (repeatable)").argParser(
        parseContextPairs("values"),
      ),
    )
    .addOption(
      new Option("--context-from-header <header=key>", "copy a request header into the evaluation context, as flagd -H (repeatable)").argParser(
        parseContextPairs("fromHeaders"),
      ),
    )
    .addOption(new Option("--fault <json>", "inject a fault for the whole run: a JSON rule or list of rules (repeatable)").argParser(parseFaults));
}

/** HTTPS and other devices. */
function networkOptions(command: Command): Command {
  return command
    .option("--https", "serve HTTPS with a generated self-signed certificate (clients must accept it, e.g. curl -k)")
    .option("--public", "listen on all interfaces and show the network URL and a QR code (for demos on other devices)");
}

/** The admin API, the dashboard page and overrides. */
function adminOptions(command: Command): Command {
  return command
    .option("--no-admin", "turn off the admin API and the dashboard page at /")
    .addOption(
      new Option("--admin-token <token>", "bearer token of the admin API (default: generated once and kept in the state directory)").env(
        "FLAGSERVE_ADMIN_TOKEN",
      ),
    )
    .addOption(
      new Option("--admin-host <name>", "a host name the admin API and page answer to besides localhost and the listen address (repeatable)").argParser(
        (value: string, previous: string[] = []) => [...previous, ...value.split(",").map((v) => v.trim()).filter(Boolean)],
      ),
    )
    .option("--overrides <file>", "keep overrides in this YAML file across restarts (default: in memory only)");
}

/** flagd's gRPC protocols, for flagd's providers (docs/flagd.md). */
function flagdOptions(command: Command): Command {
  return command
    .addOption(new Option("--flagd-port <port>", "also serve flagd's gRPC evaluation and sync services on this port (e.g. 8013; 0 = any free port)").argParser(parsePort))
    .addOption(
      new Option("--flagd-selector-by-name <env>", "let a flagd selector name this environment instead of giving its key (repeatable; anyone who can connect reads it)").argParser(
        (value: string, previous: string[] = []) => [...previous, ...value.split(",").map((v) => v.trim()).filter(Boolean)],
      ),
    );
}

/** What is printed. */
function outputOptions(command: Command): Command {
  return command
    .option("-q, --quiet", "print only the ready line, warnings and errors")
    .option("--json-logs", "write all output, the ready line included, as JSON lines");
}

const SERVE_HELP = `
Output:
  stdout: the start-up lines, then "ready <url>" once requests are accepted
  stderr: problems, changes, streams opened and closed
  With --json-logs every line is a JSON object {"time","level","msg",...};
  the ready line is {"time":...,"level":"info","msg":"ready","url":"http://..."}.
Stops (exit 0) on SIGINT, SIGTERM or SIGHUP; started by npm (npx, npm exec, npm run), also
when npm ends, since npm does not always pass signals on.

Examples:
  $ flagserve                              serve ./flags, or the bundled example
  $ flagserve ./flags --port 0             any free port; read the URL from the "ready" line
  $ flagserve flags.yaml --no-watch -q     CI fixture: load once, print only "ready <url>"
  $ flagserve https://config.example/flags/development.yaml ./flags/local.yaml
                                           a URL (polled every 5 s) beside a file
  $ flagserve --json-logs                  JSON lines for a log collector
  $ flagserve --public --https             demo on a phone on the same network
  $ flagserve --context-value shard=3 --context-from-header X-User-Plan=plan
                                           steer targeting from outside the app (as flagd -X / -H)
  $ flagserve --fault '{"route":"evaluate","ratio":0.5,"status":500}'
                                           every other evaluation fails (test retries and fallbacks)`;

/** `flagserve valdiate` is a typo, not a configuration path that happens to be missing. */
function rejectCommandTypo(args: string[], command: Command): void {
  const [pathArg] = args;
  if (args.length === 1 && pathArg !== undefined && /^[a-z]+$/.test(pathArg) && !existsSync(pathArg)) {
    const names = command.parent?.commands.map((c) => c.name()) ?? [];
    const near = names.find((name) => name !== "help" && editDistance(name, pathArg) <= 2);
    if (near) (command.parent ?? command).error(`error: '${pathArg}' is not a command nor an existing path (did you mean ${near}?)`);
  }
}

/** Levenshtein distance, for "did you mean" (names are short). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The body of the start banner's example request. */
const TRY_BODY = '{"context":{"targetingKey":"user-1"}}';

/** One shell word, single-quoted. */
const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/** A line on stdout: text as given, or a JSON record. */
function printer(format: LogFormat) {
  return (text: string, msg: string, fields?: Record<string, unknown>) => {
    flushLog(); // log lines written before this one are seen before it
    process.stdout.write(format === "json" ? formatRecord("json", "info", msg, fields) : `${text}\n`);
  };
}

/** With --allow-invalid: one note per invalid file, saying what is not served. */
function noteInvalid(logger: Logger, problems: ReadonlyMap<string, Problem[]>, served: ReadonlySet<string>): void {
  for (const [env, list] of problems) {
    const byFile = new Map<string, number>();
    for (const p of list) byFile.set(p.file, (byFile.get(p.file) ?? 0) + 1);
    for (const [file, count] of byFile) {
      const what =
        env === "" ? "it is ignored" : served.has(env) ? `environment ${env} is served; its flags with problems answer PARSE_ERROR` : `environment ${env} is not served`;
      logger.warn(`${file || "(configuration)"}: ${plural(count, "problem")} (listed above); ${what}`, {
        file,
        problems: count,
        ...(env !== "" && { env }),
      });
    }
  }
}

/** On SIGINT, SIGTERM and SIGHUP; and, as signals sent to npm may never reach us, when npm (or its shell) is gone. */
function stopWhenAsked(stop: () => void, logger: Logger): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, stop);
  watchProcesses(npmLaunchers(), (pid) => {
    logger.info(`stopping: npm, which started flagserve, has ended (pid ${pid})`, { pid });
    stop();
  });
}

/** The page's URL with the token in the fragment: never sent to a server, a proxy or a Referer. */
function printDashboard(print: ReturnType<typeof printer>, format: LogFormat, url: string, token: string | undefined): void {
  if (token === undefined) return;
  const local = url.replace("://127.0.0.1", "://localhost");
  // A JSON log goes to collectors: the URL without the token there.
  if (format === "json") print("", "dashboard", { url: `${local}/` });
  else print(`  dashboard ${local}/#token=${encodeURIComponent(token)}`, "dashboard");
}

async function runServe(args: string[], flags: ServeFlags): Promise<void> {
  const format: LogFormat = flags.jsonLogs ? "json" : "text";
  const logger = createLogger(format, undefined, { quiet: flags.quiet });
  const { specs, bundled } = resolveSources(args);
  const missing = missingPaths(specs);
  if (missing.length > 0) {
    // --allow-invalid cannot help here: there is nothing to read.
    for (const path of missing) logger.error(`not serving: ${path}: path does not exist`, { path });
    process.exitCode = 1;
    return;
  }
  const server = await start(specs, flags, logger);
  if (!server) return;

  // Before the ready line: whoever waits for it may signal us straight away.
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  stopWhenAsked(() => void stop(), logger);
  noteInvalid(logger, server.store.problems, new Set(server.store.environments.keys()));
  const url = localUrl(server.url);
  if (!flags.quiet) await printBanner({ specs, bundled, url, serverUrl: server.url, keys: server.keys(), adminToken: server.adminToken, flagdPort: server.flagdPort }, flags, logger);
  printer(format)(`ready ${url}`, "ready", { url });
}

type Started = Awaited<ReturnType<typeof import("../server/server.js").startServer>>;

/** The server, started; or undefined when it cannot start (reported, exit code set). */
async function start(specs: string[], flags: ServeFlags, logger: Logger): Promise<Started | undefined> {
  const corsOrigin = flags.corsOrigin === "*" ? "*" : flags.corsOrigin.split(",").map((o) => o.trim());
  // Loaded here, not at the top: `validate`, `init` and `eval` start faster without the server.
  // The HTTP side is not awaited here: startServer loads it while it reads the configuration.
  const [{ InvalidConfigError, startServer }, { formatProblem }, { createSource }] = await Promise.all([
    import("../server/server.js"),
    import("../model/types.js"),
    import("../sources/index.js"),
  ]);
  const urlOptions = { pollIntervalMs: flags.pollInterval * 1000, timeoutMs: flags.fetchTimeout * 1000, logger };
  try {
    return await startServer({
      source: { sources: specs.map((spec) => createSource(spec, urlOptions)) },
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
      admin: flags.admin,
      adminToken: flags.adminToken,
      adminHosts: flags.adminHost,
      overridesFile: flags.overrides,
      logger,
      contextValues: flags.contextValue,
      contextFromHeaders: flags.contextFromHeader,
      faults: flags.fault,
      flagdPort: flags.flagdPort,
      flagdSelectorByName: flags.flagdSelectorByName,
    });
  } catch (error) {
    // The listener's and the admin API's errors. startServer has loaded both modules before it can
    // raise them; for an error raised earlier this loads them, a few milliseconds on the way out.
    const [{ PortInUseError }, { OverridesFileError }, { FlagdPortError }] = await Promise.all([
      import("../http/listen.js"),
      import("../admin/overrides.js"),
      import("../flagd/server.js"),
    ]);
    if (error instanceof InvalidConfigError) {
      for (const problem of error.problems) logger.error(formatProblem(problem), { ...problem });
      const where = listText(specs);
      logger.error(`not serving: ${plural(error.problems.length, "problem")} in ${where} (use --allow-invalid to serve the rest anyway)`, {
        path: where,
        problems: error.problems.length,
      });
    } else if (error instanceof PortInUseError) {
      logger.error(error.message, { host: error.host, port: error.port });
    } else if (error instanceof OverridesFileError || error instanceof FlagdPortError) {
      logger.error(error.message);
    } else throw error;
    process.exitCode = 1;
    return undefined;
  }
}

interface Banner {
  specs: string[];
  bundled: boolean;
  /** For people: localhost rather than 127.0.0.1. */
  url: string;
  serverUrl: string;
  keys: Record<string, string>;
  /** Undefined with the admin API off. */
  adminToken?: string;
  flagdPort?: number;
}

/** What is served, where, with which keys, and a request to try. */
async function printBanner({ specs, bundled, url, serverUrl, keys, adminToken, flagdPort }: Banner, flags: ServeFlags, logger: Logger): Promise<void> {
  const format: LogFormat = flags.jsonLogs ? "json" : "text";
  const print = printer(format);
  const path = listText(specs);
  const where = bundled ? `${path} (the bundled example; pass a PATH or create ./flags to serve your own)` : path;
  print(`flagserve ${VERSION} serving ${where}`, "serving", { version: VERSION, path, ...(specs.length > 1 && { sources: specs }), bundled, watch: flags.watch });
  print(`  ${url}`, "listening", { url });
  if (flagdPort !== undefined) print(`  flagd gRPC port ${flagdPort} (selector: an environment's key)`, "flagd", { port: flagdPort });
  if (flags.public) {
    const network = networkUrls(serverUrl);
    for (const n of network) print(`  ${n}  (network)`, "network", { url: n });
    if (network.length === 0) logger.warn("--public: no network address found; other devices cannot reach this machine");
    else if (format === "text") {
      const qr = await qrCode(network[0]!);
      if (qr) print(qr.replace(/^/gm, "  "), "qr");
    }
  }
  const width = Math.max(0, ...Object.keys(keys).map((k) => k.length));
  for (const [env, key] of Object.entries(keys)) print(`  environment ${env.padEnd(width)}  key ${key}`, "environment", { env, key });
  printDashboard(print, format, url, adminToken);
  const first = Object.entries(keys)[0];
  if (first && format === "text") {
    // With a targetingKey, so that flags split by `fractional` answer too.
    const request = `-X POST -H ${shellQuote(`X-API-Key: ${first[1]}`)} -d '${TRY_BODY}' ${url}/ofrep/v1/evaluate/flags`;
    print(`  try: curl${flags.https ? " -k" : ""} ${request}`, "try");
  }
}
