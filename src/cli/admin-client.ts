/**
 * What the commands that talk to a running server's admin API share (`override`, `session`,
 * `keys revoke`): which server, with which token, one call, and a failure as one line and exit
 * status 1.
 *
 * A token given (--admin-token, FLAGSERVE_ADMIN_TOKEN) goes where the user says (--url). A token
 * read from a state directory goes only to a server of that configuration that recorded itself
 * there (admin/records.ts) and proves, over the connection the token is then sent on, that it
 * holds the token (admin/proof.ts). That directory is --state-dir, else the default one of the
 * default configuration (./flags, else the bundled example); with --url and no --state-dir, the
 * one holding a record of that URL. Never another configuration's server by default.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequestArgs, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { CommanderError, InvalidArgumentError, Option, type Command } from "commander";
import type { ServerRecord } from "../admin/records.js";
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

/**
 * A keep-alive agent of one connection, opened once: the calls made through it go over the
 * connection the first one opened, or fail; never over a new connection to whatever listens
 * there by then.
 */
function oneConnection(https: boolean): HttpAgent {
  let opened = false;
  // The server proves itself with the challenge on this connection; its self-signed certificate
  // (--https) proves nothing more. A token given for a URL is sent only where TLS trusts the server.
  const agent: HttpAgent = https
    ? new HttpsAgent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })
    : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const open = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => {
    if (opened) {
      callback?.(new Error("the connection the server proved itself on was closed"), undefined as unknown as Socket);
      return undefined as unknown as Socket;
    }
    opened = true;
    return open(options, callback);
  };
  return agent;
}

interface Answer {
  status: number;
  statusText: string;
  text: string;
  /** The address and port this end was connected to (proof.ts's connectionEnd). */
  peer: string;
}

/** A call whose server sends nothing this long fails (a stopped process still accepts connections). */
const CALL_TIMEOUT_MS = 5_000;
/** The most of an answer to the challenge read: a proof is a few dozen bytes; what else listens on a recorded port may not stop. */
const PROOF_ANSWER_BYTES = 64 * 1024;

/** One HTTP request through `agent`; the body read whole, up to `limit` bytes. */
async function call(
  url: string,
  agent: HttpAgent,
  init: { method: string; headers?: Record<string, string>; body?: string; limit?: number },
): Promise<Answer> {
  const { connectionEnd } = await import("../admin/proof.js");
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const options: ClientRequestArgs = { method: init.method, headers: init.headers, agent };
  return new Promise((resolve, reject) => {
    const req = send(target, options, (res: IncomingMessage) => {
      // Read now: a kept-alive connection goes back to its agent (res.socket null) once the answer is read.
      const peer = connectionEnd(res.socket?.remoteAddress, res.socket?.remotePort);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (init.limit !== undefined && size > init.limit) req.destroy(new Error(`an answer larger than ${init.limit} bytes`));
        else chunks.push(chunk);
      });
      res.on("error", reject);
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? "",
          text: Buffer.concat(chunks).toString("utf8"),
          peer,
        }),
      );
    });
    req.setTimeout(CALL_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${CALL_TIMEOUT_MS / 1000} s`)));
    req.on("error", reject);
    req.end(init.body);
  });
}

/** Where a call goes: the URL, the token, and (for a token read from state) the connection its server proved itself on. */
export interface Target {
  url: string;
  token: string;
  agent?: HttpAgent;
  /** Records that were ignored, and why (said on stderr by adminCall). */
  notes: string[];
}

/** A recorded server's answer to the challenge: the connection it proved itself on, or why it is ignored. */
async function challenge(record: ServerRecord, token: string, stateDir: string): Promise<{ agent: HttpAgent } | { note: string }> {
  const [{ isRunning }, { newNonce, proofMatches }, { PROOF_PATH }] = await Promise.all([
    import("../admin/records.js"),
    import("../admin/proof.js"),
    import("../admin/paths.js"),
  ]);
  const gone = `ignoring the record of ${record.url} (pid ${record.pid}) in ${stateDir}`;
  if (!isRunning(record.pid)) return { note: `${gone}: that server is gone` };
  const agent = oneConnection(record.url.startsWith("https:"));
  const nonce = newNonce();
  try {
    const answer = await call(`${record.url}${PROOF_PATH}?nonce=${nonce}`, agent, { method: "GET", limit: PROOF_ANSWER_BYTES });
    const proof = answer.status === 200 ? (JSON.parse(answer.text) as { proof?: unknown }).proof : undefined;
    if (proofMatches(proof, token, nonce, answer.peer)) return { agent };
  } catch (error) {
    agent.destroy();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ECONNREFUSED") return { note: `${gone}: nothing listens there, so that server is gone` };
    if (!(error instanceof SyntaxError)) return { note: `${gone}: ${code ?? (error as Error).message}` };
  }
  agent.destroy();
  return { note: `${gone}: what answers there cannot prove it holds the token kept there, so the token is not sent to it` };
}

/** The servers recorded in `stateDir` (those at `url`, if given) that proved they hold `token`. */
async function provenServers(
  stateDir: string,
  token: string,
  url?: string,
): Promise<{ proven: (ServerRecord & { agent: HttpAgent })[]; notes: string[]; others: ServerRecord[] }> {
  const { readServerRecords } = await import("../admin/records.js");
  const records = await readServerRecords(stateDir);
  const asked = url === undefined ? records : records.filter((r) => sameServer(r.url, url));
  const answers = await Promise.all(asked.map((record) => challenge(record, token, stateDir)));
  const proven: (ServerRecord & { agent: HttpAgent })[] = [];
  const notes: string[] = [];
  answers.forEach((answer, i) => ("agent" in answer ? proven.push({ ...asked[i]!, agent: answer.agent }) : notes.push(answer.note)));
  return { proven, notes, others: records.filter((r) => !asked.includes(r)) };
}

/** The state directory of the default configuration (./flags, else the bundled example). */
async function defaultConfigStateDir(): Promise<string> {
  const { defaultStateDir } = await import("../store/state-dir.js");
  return defaultStateDir(resolveSources([]).specs);
}

/** The per-user state directories other than `except` holding a record of `url`; those that cannot be read are skipped. */
async function directoriesRecording(url: string, except: string): Promise<string[]> {
  const [{ userStateDir }, { readServerRecords }] = await Promise.all([import("../store/state-dir.js"), import("../admin/records.js")]);
  const base = userStateDir();
  const names = await readdir(base).catch(() => [] as string[]);
  const found = await Promise.all(
    names.map(async (name) => {
      const dir = join(base, name);
      if (dir === except) return undefined;
      const records = await readServerRecords(dir).catch(() => []);
      return records.some((r) => sameServer(r.url, url)) ? dir : undefined;
    }),
  );
  return found.filter((dir): dir is string => dir !== undefined);
}

/**
 * The recorded, running server a state directory names for `health` (no token is sent): the
 * newest. A directory or record that is not private is refused (StateDirError), as for every read.
 */
export async function recordedServerUrl(stateDir?: string): Promise<string | undefined> {
  const { readServerRecords, isRunning } = await import("../admin/records.js");
  const records = await readServerRecords(stateDir ?? (await defaultConfigStateDir()));
  return records.filter((r) => isRunning(r.pid)).at(-1)?.url;
}

/**
 * Where to send the call and the token to send, or an Error saying why the token stays here. A
 * token read from state is sent only over a connection its server proved itself on.
 */
export async function connectionOf(flags: AdminConnection): Promise<Target> {
  if (flags.adminToken) return { url: flags.url ?? DEFAULT_ADMIN_URL, token: flags.adminToken, notes: [] };
  const { readAdminToken } = await import("../admin/token.js");
  const stateDir = flags.stateDir ?? (await defaultConfigStateDir());
  const token = await readAdminToken(stateDir);
  const found = token === undefined ? { proven: [], notes: [], others: [] } : await provenServers(stateDir, token, flags.url);
  const { proven, notes } = found;
  if (proven.length === 1) return { url: proven[0]!.url, token: token!, agent: proven[0]!.agent, notes };
  for (const extra of proven) extra.agent.destroy();
  if (proven.length > 1) {
    const list = proven.map((r) => `${r.url} (pid ${r.pid})`).join(", ");
    throw new Error(
      `${proven.length} servers of this configuration are running (${list}): say which by its URL (--url; for session, its URL argument)`,
    );
  }
  if (flags.url !== undefined && flags.stateDir === undefined) {
    // --url names a server of another configuration: the directory that recorded it holds its token.
    for (const dir of await directoriesRecording(flags.url, stateDir)) {
      const theirs = await readAdminToken(dir).catch((error: Error) => void notes.push(`skipping ${dir}: ${error.message}`));
      const other = theirs === undefined ? undefined : await provenServers(dir, theirs, flags.url);
      if (other?.proven.length === 1) return { url: other.proven[0]!.url, token: theirs!, agent: other.proven[0]!.agent, notes };
      notes.push(...(other?.notes ?? []));
    }
  }
  const ignored = notes.length > 0 ? ` (${notes.join("; ")})` : "";
  const { isRunning } = await import("../admin/records.js");
  const running = found.others.filter((r) => isRunning(r.pid)).map((r) => r.url);
  if (flags.url !== undefined && running.length > 0) {
    throw new Error(
      `not sending the admin token kept in ${stateDir} to ${flags.url}: it belongs to the server at ${running.join(", ")}${ignored}. Use --url ${running[0]}, or pass the other server's token with --admin-token`,
    );
  }
  const target = flags.url ?? "a running server";
  const why =
    token === undefined ? `no admin token is kept in ${stateDir}` : `no running flagserve recorded itself in ${stateDir}${ignored}`;
  throw new Error(
    `no admin token for ${target}: ${why}; start one, pass --state-dir of the one you mean (flagserve keys dir SOURCE prints a configuration's), or pass --admin-token (or set FLAGSERVE_ADMIN_TOKEN)`,
  );
}

/** One admin API call; a refusal or an unreachable server becomes an Error with a clear message. */
export async function adminCall(flags: AdminConnection, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const { url, token, agent, notes } = await connectionOf(flags);
  for (const note of notes) err(`note: ${note}`);
  const through = agent ?? (url.startsWith("https:") ? new HttpsAgent() : new HttpAgent());
  const { ADMIN_API_PREFIX } = await import("../admin/paths.js");
  let answer: Answer;
  try {
    answer = await call(`${url}${ADMIN_API_PREFIX}${path}`, through, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`cannot reach ${url}: ${code ?? (error as Error).message}`);
  } finally {
    through.destroy();
  }
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    // not JSON: the status says it
  }
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`${answer.status} ${String(data.errorCode ?? "")}: ${String(data.errorDetails ?? answer.statusText)}`);
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
        "the admin token, sent to --url (default: the one kept in the state directory, sent only to a server that proves it holds it)",
      ).env("FLAGSERVE_ADMIN_TOKEN"),
    )
    .option("--state-dir <dir>", "the state directory of the server (default: that of ./flags; see docs/state.md)");
}
