/**
 * What the commands that talk to a running server's admin API share (`override`, `session`):
 * the server's URL, the admin token (--admin-token, else FLAGSERVE_ADMIN_TOKEN, else the one the
 * server keeps in its state directory), one call, and a failure as one line and exit status 1.
 */
import { CommanderError, InvalidArgumentError, Option, type Command } from "commander";
import { err, resolveConfigPath } from "./paths.js";

export interface AdminConnection {
  url: string;
  adminToken?: string;
  stateDir?: string;
}

export const DEFAULT_ADMIN_URL = "http://127.0.0.1:8080";

/** A server URL given on the command line: its origin (the admin API is at its root). */
export function parseAdminUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.origin;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:8080");
}

/** The admin token, or a message saying where it was looked for. */
async function tokenOf(flags: AdminConnection): Promise<string> {
  if (flags.adminToken) return flags.adminToken;
  const [{ defaultStateDir }, { readAdminToken, adminTokenPath }] = await Promise.all([import("../server/server.js"), import("../admin/token.js")]);
  const stateDir = flags.stateDir ?? defaultStateDir(resolveConfigPath(undefined).path);
  const token = await readAdminToken(stateDir).catch(() => undefined);
  if (!token) throw new Error(`no admin token: pass --admin-token, set FLAGSERVE_ADMIN_TOKEN, or --state-dir where the server keeps it (looked for ${adminTokenPath(stateDir)})`);
  return token;
}

/** One admin API call; a refusal or an unreachable server becomes an Error with a clear message. */
export async function adminCall(flags: AdminConnection, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
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

/** Runs an action; a failure is one line on stderr (`flagserve NAME: reason`) and exit status 1. */
export const runAdminAction =
  (name: string) =>
  <A extends unknown[]>(action: (...args: A) => Promise<void>) =>
  async (...args: A): Promise<void> => {
    try {
      await action(...args);
    } catch (error) {
      if (error instanceof CommanderError) throw error;
      err(`flagserve ${name}: ${(error as Error).message}`);
      process.exitCode = 1;
    }
  };

/** `--admin-token` (or FLAGSERVE_ADMIN_TOKEN) and `--state-dir`, where the token is otherwise read. */
export function withAdminToken(command: Command): Command {
  return command
    .addOption(new Option("--admin-token <token>", "the admin token (default: the one kept in the state directory)").env("FLAGSERVE_ADMIN_TOKEN"))
    .option("--state-dir <dir>", "where the server keeps its admin token (default: .flagserve beside ./flags)");
}
