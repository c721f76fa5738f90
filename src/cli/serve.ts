/** `flagserve [serve] [SOURCE...]`: load, listen, print where and with which keys, stop cleanly. */
import { existsSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { givenAdminTokenProblem } from "../admin/token-rules.js";
import type { Problem } from "../model/types.js";
import { closestName } from "../log/names.js";
import { escapeControls } from "../log/escape.js";
import { createLogger, flushLog, formatRecord, type LogFormat, type Logger } from "../log/logger.js";
import { DEFAULT_KEY_GRACE_SECONDS } from "../store/key-grace.js";
import { shellWord } from "./invocation.js";
import { npmLaunchers, watchProcesses } from "./launcher.js";
import { isLoopbackAddress, localUrl } from "../http/hosts.js";
import { networkUrls, qrCode } from "./network.js";
import {
  parseByteSize,
  parseContextPairs,
  parseFaults,
  parseNonNegativeNumber,
  parsePort,
  parsePositiveInteger,
  parsePositiveNumber,
} from "./options.js";
import { STATE_DIR_HELP, VERSION, plural } from "./paths.js";
import { NO_ENVIRONMENTS, SOURCES_ARGUMENT_HELP, listText, missingPaths, resolveSources } from "./sources.js";
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
  // Grouped by what a reader is looking for; the fine print of each option is in docs/cli.md.
  for (const [heading, addOptions] of OPTION_GROUPS) addOptions(serve.optionsGroup(heading));
  serve.optionsGroup("Options:");
  return serve.addHelpText("after", SERVE_HELP).action(async (args: string[], flags: ServeFlags, command: Command) => {
    rejectCommandTypo(args, command);
    await runServe(args, flags);
  });
}

/** Following the sources: watching files, polling URLs, what a problem costs. */
function sourceOptions(command: Command): Command {
  return command
    .option("--no-watch", "load once; no watching, no polling")
    .addOption(
      new Option("--poll-interval <seconds>", "seconds between URL fetches").argParser(parsePositiveNumber("--poll-interval")).default(5),
    )
    .addOption(new Option("--fetch-timeout <seconds>", "URL fetch timeout").argParser(parsePositiveNumber("--fetch-timeout")).default(10))
    .option("--allow-invalid", "serve despite problems");
}

/** Where and how to listen. */
function serverOptions(command: Command): Command {
  return command
    .addOption(new Option("-p, --port <port>", "0 = any free port").argParser(parsePort).default(8080))
    .option("--host <host>", "interface (default: 127.0.0.1)")
    .option("--https", "HTTPS, self-signed certificate")
    .option("--public", "all interfaces, with a QR code")
    .option("--cors-origin <origin>", "allowed CORS origins", "*")
    .option("--client-ip-header <name>", "client address header (proxies)")
    .addOption(new Option("--max-body <size>", "largest request body").argParser(parseByteSize).default(1024 * 1024, "1mb"));
}

/** Event streams. */
function streamOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--heartbeat <seconds>", "seconds between heartbeats (default: 15)").argParser(parseNonNegativeNumber("--heartbeat")),
    )
    .addOption(new Option("--event-set <set>", "event names").choices(["primary", "variant"]).default("primary"))
    .addOption(
      new Option("--max-streams-per-ip <n>", "stream limit per client address").argParser(parsePositiveInteger("--max-streams-per-ip")),
    );
}

/** Keys and the state directory. */
function keyOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--key-grace <seconds>", "grace of a replaced key")
        .argParser(parseNonNegativeNumber("--key-grace"))
        .default(DEFAULT_KEY_GRACE_SECONDS),
    )
    .option("--state-dir <dir>", STATE_DIR_HELP);
}

/** The admin API, the dashboard page and overrides. */
function adminOptions(command: Command): Command {
  return command
    .option("--no-admin", "no admin API, no dashboard")
    .addOption(
      new Option("--admin-token <token>", "admin token, 16 characters or more").env("FLAGSERVE_ADMIN_TOKEN").argParser(parseAdminToken),
    )
    .addOption(
      new Option("--admin-host <name>", "another host name for the admin API").argParser((value: string, previous: string[] = []) => [
        ...previous,
        ...value
          .split(",")
          .map((v) => v.trim())
          .filter(Boolean),
      ]),
    )
    .option("--overrides <file>", "keep overrides in this YAML file");
}

/** Test-fixture behaviour: context values and headers, injected faults. */
function fixtureOptions(command: Command): Command {
  return command
    .addOption(new Option("--context-value <key=value>", "add to every context (flagd -X)").argParser(parseContextPairs("values")))
    .addOption(
      new Option("--context-from-header <header=key>", "header into the context (flagd -H)").argParser(parseContextPairs("fromHeaders")),
    )
    .addOption(new Option("--fault <json>", "inject a fault (JSON rule)").argParser(parseFaults));
}

/** A given admin token long enough not to be guessed (checked again by the server, for the programmatic API). */
function parseAdminToken(value: string): string | undefined {
  if (value === "") return undefined; // FLAGSERVE_ADMIN_TOKEN= (set, empty): not given
  const problem = givenAdminTokenProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

/** flagd's protocols (gRPC, gRPC-Web, Connect), for flagd's providers (docs/flagd.md). */
function flagdOptions(command: Command): Command {
  return command
    .addOption(new Option("--flagd-port <port>", "serve flagd's services too: gRPC, gRPC-Web, Connect (e.g. 8013)").argParser(parsePort))
    .addOption(
      new Option("--flagd-selector-by-name <env>", "a flagd selector may name ENV, no key").argParser(
        (value: string, previous: string[] = []) => [
          ...previous,
          ...value
            .split(",")
            .map((v) => v.trim())
            .filter(Boolean),
        ],
      ),
    );
}

/** What is printed. */
function outputOptions(command: Command): Command {
  return command.option("-q, --quiet", "only the ready line and problems").option("--json-logs", "every line as JSON");
}

const OPTION_GROUPS: ReadonlyArray<readonly [string, (command: Command) => Command]> = [
  ["Sources:", sourceOptions],
  ["Server:", serverOptions],
  ["Events:", streamOptions],
  ["Keys and state:", keyOptions],
  ["Admin and dashboard:", adminOptions],
  ["flagd protocols:", flagdOptions],
  ["Test fixture:", fixtureOptions],
  ["Logging:", outputOptions],
];

const SERVE_HELP = `
stdout: the start-up lines, then "ready <url>" once requests are accepted;
stderr: problems and changes. Stops (exit 0) on SIGINT, SIGTERM or SIGHUP.
Repeatable: --context-value, --context-from-header, --fault, --admin-host,
--flagd-selector-by-name.

Examples:
  $ npx flagserve                       ./flags, or the bundled example
  $ npx flagserve flags --port 0 -q     any free port; print only "ready <url>"
  $ npx flagserve https://host/dev.yaml ./flags/local.yaml
  $ npx flagserve --fault '{"route":"evaluate","ratio":0.5,"status":500}'

Every option in detail: docs/cli.md`;

/** `flagserve valdiate` is a typo, not a configuration path that happens to be missing. */
function rejectCommandTypo(args: string[], command: Command): void {
  const [pathArg] = args;
  if (args.length === 1 && pathArg !== undefined && /^[a-z]+$/.test(pathArg) && !existsSync(pathArg)) {
    const names = command.parent?.commands.map((c) => c.name()) ?? [];
    const near = closestName(
      pathArg,
      names.filter((name) => name !== "help"),
      2,
    );
    if (near) (command.parent ?? command).error(`error: '${pathArg}' is not a command nor an existing path (did you mean ${near}?)`);
  }
}

/** The body of the start banner's example request. */
const TRY_BODY = '{"context":{"targetingKey":"user-1"}}';

/** A line on stdout: text escaped whole (it holds keys from the files), or a JSON record. */
function printer(format: LogFormat) {
  return (text: string, msg: string, fields?: Record<string, unknown>) => {
    flushLog(); // log lines written before this one are seen before it
    process.stdout.write(format === "json" ? formatRecord("json", "info", msg, fields) : `${escapeControls(text)}\n`);
  };
}

/** With --allow-invalid: one note per invalid file, saying what is not served. */
function noteInvalid(logger: Logger, problems: ReadonlyMap<string, Problem[]>, served: ReadonlySet<string>): void {
  for (const [env, list] of problems) {
    const byFile = new Map<string, number>();
    for (const p of list) byFile.set(p.file, (byFile.get(p.file) ?? 0) + 1);
    for (const [file, count] of byFile) {
      const what =
        env === ""
          ? "it is ignored"
          : served.has(env)
            ? `environment ${env} is served; its flags with problems answer PARSE_ERROR`
            : `environment ${env} is not served`;
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
  // `on`, not `once`: a listener stays registered, so a library's own signal handler (signal-exit,
  // used by write-file-atomic) never finds itself alone and kills the process before stop is done.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, stop);
  watchProcesses(npmLaunchers(), (pid) => {
    logger.info(`stopping: npm, which started flagserve, has ended (pid ${pid})`, { pid });
    stop();
  });
}

/**
 * Listening beyond loopback: say so, with every address other machines reach it at, the flagd
 * port's too (it binds to the same host), and the environments that port serves with no key.
 */
function warnIfReachable(
  logger: Logger,
  serverUrl: string,
  { isPublic = false, host = "", flagdPort, flagdSelectorByName = [] }: Reachable,
): void {
  const listening = new URL(serverUrl).hostname;
  if (listening === "localhost" || isLoopbackAddress(listening)) return;
  const addresses = networkUrls(serverUrl);
  const where = addresses.length > 0 ? addresses.join(", ") : "(no network address found)";
  const flagd = flagdPort === undefined ? [] : addresses.map((address) => `${new URL(address).hostname}:${flagdPort}`);
  const alsoFlagd =
    flagdPort === undefined ? "" : flagd.length > 0 ? `, and the flagd port at ${flagd.join(", ")}` : `, and the flagd port ${flagdPort}`;
  const byName = flagdPort === undefined ? [] : flagdSelectorByName;
  const keyless =
    byName.length > 0 ? ` (but anyone reaching the flagd port reads ${byName.join(", ")} by name: --flagd-selector-by-name)` : "";
  logger.warn(
    `${isPublic ? "--public" : `--host ${host || listening}`}: other machines can reach this server at ${where}${alsoFlagd}; evaluations need an environment's key${keyless}, the dashboard and admin API the admin token`,
    { addresses, ...(flagd.length > 0 && { flagd }), ...(byName.length > 0 && { flagdSelectorByName: byName }) },
  );
}

interface Reachable {
  isPublic?: boolean;
  /** --host as given. */
  host?: string;
  flagdPort?: number;
  /** Environments a flagd selector may name: read there with no key. */
  flagdSelectorByName?: readonly string[];
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
  if (server.store.environments.size === 0 && server.store.problems.size === 0) {
    const where = listText(specs);
    logger.warn(`${where}: ${NO_ENVIRONMENTS}; serving nothing until one appears`, { path: where });
  }
  warnIfReachable(logger, server.url, {
    isPublic: flags.public,
    host: flags.host,
    flagdPort: server.flagdPort,
    flagdSelectorByName: flags.flagdSelectorByName,
  });
  const url = localUrl(server.url);
  if (!flags.quiet)
    await printBanner(
      { specs, bundled, url, serverUrl: server.url, keys: server.keys(), adminToken: server.adminToken, flagdPort: server.flagdPort },
      flags,
      logger,
    );
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
    const [{ PortUnavailableError }, { OverridesFileError }, { StateDirError }, { AdminTokenError }, { FlagdPortError }] =
      await Promise.all([
        import("../http/listen.js"),
        import("../admin/overrides.js"),
        import("../store/state-dir.js"),
        import("../admin/token.js"),
        import("../flagd/server.js"),
      ]);
    if (error instanceof InvalidConfigError) {
      for (const problem of error.problems) logger.error(formatProblem(problem), { ...problem });
      const where = listText(specs);
      logger.error(`not serving: ${plural(error.problems.length, "problem")} in ${where} (use --allow-invalid to serve the rest anyway)`, {
        path: where,
        problems: error.problems.length,
      });
    } else if (error instanceof PortUnavailableError) {
      logger.error(error.message, { host: error.host, port: error.port, problem: error.problem });
    } else if (error instanceof OverridesFileError || error instanceof FlagdPortError) {
      logger.error(error.message);
    } else if (error instanceof StateDirError || error instanceof AdminTokenError) {
      logger.error(`not serving: ${error.message}`);
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
async function printBanner(
  { specs, bundled, url, serverUrl, keys, adminToken, flagdPort }: Banner,
  flags: ServeFlags,
  logger: Logger,
): Promise<void> {
  const format: LogFormat = flags.jsonLogs ? "json" : "text";
  const print = printer(format);
  const path = listText(specs);
  const where = bundled ? `${path} (the bundled example; pass a PATH or create ./flags to serve your own)` : path;
  print(`flagserve ${VERSION} serving ${where}`, "serving", {
    version: VERSION,
    path,
    ...(specs.length > 1 && { sources: specs }),
    bundled,
    watch: flags.watch,
  });
  print(`  ${url}`, "listening", { url });
  if (flagdPort !== undefined) {
    const byName = flags.flagdSelectorByName ?? [];
    const selector = `an environment's key${byName.length > 0 ? `; ${listText(byName)} also by name` : ""}`;
    print(`  flagd port ${flagdPort} (gRPC, gRPC-Web, Connect; selector: ${selector})`, "flagd", { port: flagdPort });
  }
  if (flags.public) {
    const network = networkUrls(serverUrl);
    for (const n of network) print(`  ${n}  (network)`, "network", { url: n });
    if (network.length === 0) logger.warn("--public: no network address found; other devices cannot reach this machine");
    else if (format === "text") {
      const qr = await qrCode(network[0]!);
      for (const line of qr ? qr.split("\n") : []) print(`  ${line}`, "qr");
    }
  }
  const width = Math.max(0, ...Object.keys(keys).map((k) => k.length));
  for (const [env, key] of Object.entries(keys)) print(`  environment ${env.padEnd(width)}  key ${key}`, "environment", { env, key });
  printDashboard(print, format, url, adminToken);
  const first = Object.entries(keys)[0];
  if (first && format === "text") {
    // With a targetingKey, so that flags split by `fractional` answer too.
    const request = `-X POST -H ${shellWord(`X-API-Key: ${first[1]}`)} -d '${TRY_BODY}' ${url}/ofrep/v1/evaluate/flags`;
    print(`  try: curl${flags.https ? " -k" : ""} ${request}`, "try");
  }
}
