/**
 * `flagserve override set|clear|list`: overrides on a running server, through its admin API.
 * The token: --admin-token, else FLAGSERVE_ADMIN_TOKEN, else the one the server keeps in its
 * state directory. Exit status: 0 done, 1 refused or unreachable, 2 usage error.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { err, out, resolveConfigPath } from "./paths.js";

interface ConnectionFlags {
  url: string;
  adminToken?: string;
  stateDir?: string;
}

const DEFAULT_URL = "http://127.0.0.1:8080";

function parseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.origin;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:8080");
}

/** The admin token, or a message saying where it was looked for. */
async function tokenOf(flags: ConnectionFlags): Promise<string> {
  if (flags.adminToken) return flags.adminToken;
  const [{ defaultStateDir }, { readAdminToken, adminTokenPath }] = await Promise.all([import("../server/server.js"), import("../admin/token.js")]);
  const stateDir = flags.stateDir ?? defaultStateDir(resolveConfigPath(undefined).path);
  const token = await readAdminToken(stateDir).catch(() => undefined);
  if (!token) throw new Error(`no admin token: pass --admin-token, set FLAGSERVE_ADMIN_TOKEN, or --state-dir where the server keeps it (looked for ${adminTokenPath(stateDir)})`);
  return token;
}

/** One admin API call; a refusal or an unreachable server becomes an Error with a clear message. */
async function call(flags: ConnectionFlags, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const token = await tokenOf(flags);
  let response: Response;
  try {
    response = await fetch(`${flags.url}/api/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach ${flags.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  }
  const data = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${response.status} ${String(data.errorCode ?? "")}: ${String(data.errorDetails ?? response.statusText)}`);
  return data;
}

const overrideText = (override: Record<string, unknown>): string => (typeof override.variant === "string" ? `variant ${override.variant}` : String(override.state).toLowerCase());

/** Runs an action; a failure is one line on stderr and exit status 1. */
const run =
  <A extends unknown[]>(action: (...args: A) => Promise<void>) =>
  async (...args: A): Promise<void> => {
    try {
      await action(...args);
    } catch (error) {
      if (error instanceof CommanderError) throw error;
      err(`flagserve override: ${(error as Error).message}`);
      process.exitCode = 1;
    }
  };

function withConnection(command: Command): Command {
  return command
    .addOption(new Option("--url <url>", "the running server").argParser(parseUrl).default(DEFAULT_URL))
    .addOption(new Option("--admin-token <token>", "the admin token (default: the one kept in the state directory)").env("FLAGSERVE_ADMIN_TOKEN"))
    .option("--state-dir <dir>", "where the server keeps its admin token (default: .flagserve beside ./flags)");
}

export function overrideCommand(): Command {
  const override = new Command("override").description("set, clear or list overrides on a running server (its admin API)").addHelpText(
    "after",
    `
Examples:
  $ flagserve override set new-checkout on --env development
  $ flagserve override set new-checkout --disable --env development
  $ flagserve override clear new-checkout --env development
  $ flagserve override clear --env development      all overrides of development
  $ flagserve override list --url http://127.0.0.1:8080
Exit status: 0 done, 1 refused by the server (unknown flag, variant, environment, token) or unreachable, 2 usage error.`,
  );
  addSet(override);
  addClear(override);
  addList(override);
  return override;
}

function addSet(override: Command): void {
  withConnection(
    override
      .command("set")
      .description("make every evaluation of FLAG in ENV return VARIANT (targeting bypassed), or disable it")
      .argument("<flag>", "the flag key")
      .argument("[variant]", "the variant to serve")
      .requiredOption("-e, --env <env>", "the environment")
      .option("--disable", "disable the flag instead of choosing a variant"),
  ).action(
    run(async (flag: string, variant: string | undefined, flags: ConnectionFlags & { env: string; disable?: boolean }, command: Command) => {
      if ((variant === undefined) === !flags.disable) command.error("error: give a VARIANT or --disable (not both)", { exitCode: 2 });
      const body = flags.disable ? { state: "DISABLED" } : { variant };
      await call(flags, "PUT", `/environments/${encodeURIComponent(flags.env)}/overrides/${encodeURIComponent(flag)}`, body);
      out(`${flags.env}  ${flag}  ${flags.disable ? "disabled" : `variant ${variant}`}`);
    }),
  );
}

function addClear(override: Command): void {
  withConnection(
    override
      .command("clear")
      .description("return FLAG (or, without FLAG, every flag of ENV) to its file definition")
      .argument("[flag]", "the flag key (default: all overrides of the environment)")
      .requiredOption("-e, --env <env>", "the environment"),
  ).action(
    run(async (flag: string | undefined, flags: ConnectionFlags & { env: string }) => {
      const env = encodeURIComponent(flags.env);
      if (flag !== undefined) {
        const result = await call(flags, "DELETE", `/environments/${env}/overrides/${encodeURIComponent(flag)}`);
        out(`${flags.env}  ${flag}  ${result.removed ? "cleared" : "had no override"}`);
        return;
      }
      const result = await call(flags, "DELETE", `/environments/${env}/overrides`);
      const removed = result.removed as string[];
      out(removed.length === 0 ? `${flags.env}: no overrides` : removed.map((key) => `${flags.env}  ${key}  cleared`).join("\n"));
    }),
  );
}

function addList(override: Command): void {
  withConnection(
    override.command("list", { isDefault: true }).description("print every override: ENV FLAG WHAT").option("--json", "print the JSON the server returns"),
  ).action(
    run(async (flags: ConnectionFlags & { json?: boolean }) => {
      const { overrides } = (await call(flags, "GET", "/overrides")) as { overrides: Record<string, Record<string, Record<string, unknown>>> };
      if (flags.json) return out(JSON.stringify(overrides));
      const rows = Object.entries(overrides).flatMap(([env, list]) => Object.entries(list).map(([key, o]) => `${env}  ${key}  ${overrideText(o)}`));
      if (rows.length > 0) out(rows.join("\n"));
    }),
  );
}
