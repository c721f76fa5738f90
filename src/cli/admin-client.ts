/**
 * What the commands that talk to a running server's admin API share (`override`, `session`,
 * `keys revoke`): which server, with which token, one call, and a failure as one line and exit
 * status 1.
 *
 * A token given (--admin-token, FLAGSERVE_ADMIN_TOKEN) goes where the user says (--url). A token
 * read from a state directory goes only to the server that wrote it: the URL that server recorded
 * beside it (docs/state.md). That directory is --state-dir, else the default one of the default
 * configuration (./flags, else the bundled example), else the one whose recorded URL is --url.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { CommanderError, InvalidArgumentError, Option, type Command } from "commander";
import { err } from "./paths.js";
import { resolveSources } from "./sources.js";

export interface AdminConnection {
  url?: string;
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

/** localhost and 127.0.0.1 are the same server. */
const sameServer = (a: string, b: string): boolean => {
  const norm = (url: string) => {
    const parsed = new URL(url);
    if (parsed.hostname === "localhost") parsed.hostname = "127.0.0.1";
    return parsed.origin;
  };
  return norm(a) === norm(b);
};

/** A server recorded in a state directory: its URL and the token kept beside it. */
interface Recorded {
  stateDir: string;
  url: string;
  token: string;
}

async function recordedIn(stateDir: string): Promise<Recorded | undefined> {
  const { readAdminToken, readAdminUrl } = await import("../admin/token.js");
  const [url, token] = await Promise.all([readAdminUrl(stateDir), readAdminToken(stateDir)]);
  return url !== undefined && token !== undefined ? { stateDir, url, token } : undefined;
}

/** Every server recorded in the per-user state directories (those that are private to the user). */
async function recordedServers(): Promise<Recorded[]> {
  const { userStateDir } = await import("../store/state-dir.js");
  const base = userStateDir();
  const names = await readdir(base).catch(() => [] as string[]);
  const found = await Promise.all(names.map((name) => recordedIn(join(base, name)).catch(() => undefined)));
  return found.filter((r): r is Recorded => r !== undefined);
}

/** The state directory of the default configuration (./flags, else the bundled example). */
async function defaultConfigStateDir(): Promise<string> {
  const { defaultStateDir } = await import("../store/state-dir.js");
  return defaultStateDir(resolveSources([]).specs);
}

/**
 * The server a state directory names (--state-dir, else the default configuration's, else the
 * only one recorded, or the one recorded for `url`); undefined when none is recorded.
 */
export async function findRecordedServer(flags: AdminConnection): Promise<Recorded | undefined> {
  if (flags.stateDir !== undefined) return recordedIn(flags.stateDir);
  const own = await recordedIn(await defaultConfigStateDir()).catch(() => undefined);
  if (own && (flags.url === undefined || sameServer(flags.url, own.url))) return own;
  const all = await recordedServers();
  if (flags.url !== undefined) return all.find((r) => sameServer(flags.url!, r.url));
  if (all.length > 1) {
    throw new Error(`several servers are running (${all.map((r) => r.url).join(", ")}): say which with --url, or --state-dir`);
  }
  return all[0];
}

/** Where to send the call and the token to send, or an Error saying why the token stays here. */
export async function connectionOf(flags: AdminConnection): Promise<{ url: string; token: string }> {
  if (flags.adminToken) {
    const url =
      flags.url ?? (await findRecordedServer({ ...flags, adminToken: undefined }).catch(() => undefined))?.url ?? DEFAULT_ADMIN_URL;
    return { url, token: flags.adminToken };
  }
  const recorded = await findRecordedServer(flags);
  if (recorded && (flags.url === undefined || sameServer(flags.url, recorded.url))) return { url: recorded.url, token: recorded.token };
  if (recorded) {
    throw new Error(
      `not sending the admin token kept in ${recorded.stateDir} to ${flags.url}: it belongs to the server at ${recorded.url}. Use --url ${recorded.url}, or pass the other server's token with --admin-token`,
    );
  }
  const where = flags.stateDir ?? "the state directories (flagserve keys dir SOURCE prints a configuration's)";
  const target = flags.url ?? "a running server";
  throw new Error(
    `no admin token for ${target}: no running flagserve recorded its URL and token in ${where}; start one, pass --state-dir of the one you mean, or pass --admin-token (or set FLAGSERVE_ADMIN_TOKEN)`,
  );
}

/** One admin API call; a refusal or an unreachable server becomes an Error with a clear message. */
export async function adminCall(flags: AdminConnection, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const { url, token } = await connectionOf(flags);
  let response: Response;
  try {
    response = await fetch(`${url}/api/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  }
  const data = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok)
    throw new Error(`${response.status} ${String(data.errorCode ?? "")}: ${String(data.errorDetails ?? response.statusText)}`);
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
    .addOption(
      new Option(
        "--admin-token <token>",
        "the admin token, sent to --url (default: the one kept in the state directory, sent only to the server that recorded it there)",
      ).env("FLAGSERVE_ADMIN_TOKEN"),
    )
    .option(
      "--state-dir <dir>",
      "the state directory of the server (default: that of ./flags, else of the one running server recorded; see docs/state.md)",
    );
}
