/**
 * The admin token: from `--admin-token` / `FLAGSERVE_ADMIN_TOKEN`, else generated once and kept
 * in the state directory beside the keys (0600), so the dashboard URL survives restarts. Beside
 * it the server records its URL (`admin-url`): a token read from the state directory is sent
 * only to the server that wrote it (see cli/admin-client.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { STATE_FILE_MODE, writeFileDurable } from "../store/durable-write.js";
import { checkStateFile, StateDirError, withStateLock } from "../store/state-dir.js";
import { adminTokenProblem } from "./token-rules.js";

export const ADMIN_TOKEN_FILE = "admin-token";
export const ADMIN_URL_FILE = "admin-url";
export const ADMIN_TOKEN_ENV = "FLAGSERVE_ADMIN_TOKEN";

export const adminTokenPath = (stateDir: string): string => join(stateDir, ADMIN_TOKEN_FILE);
export const adminUrlPath = (stateDir: string): string => join(stateDir, ADMIN_URL_FILE);

/** 256 bits, prefixed so a leaked token says what it is. */
export const generateAdminToken = (): string => `fsa_${randomBytes(32).toString("base64url")}`;

/** A token given as an option or in the environment that is too short to be one. */
export class AdminTokenError extends Error {}

/** One line of a private state file (trimmed), if there is one; a file that is not private is refused (StateDirError). */
async function readLine(file: string): Promise<string | undefined> {
  if (!(await checkStateFile(file))) return undefined;
  try {
    const line = (await readFile(file, "utf8")).trim();
    return line === "" ? undefined : line;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The token kept in the state directory, if there is one. */
export const readAdminToken = (stateDir: string): Promise<string | undefined> => readLine(adminTokenPath(stateDir));

/** The URL of the server that uses the kept token, as it recorded it when it started listening. */
export const readAdminUrl = (stateDir: string): Promise<string | undefined> => readLine(adminUrlPath(stateDir));

/** Records the URL of the server that uses the kept token (written once it listens). */
export const recordAdminUrl = (stateDir: string, url: string): Promise<void> =>
  withStateLock(stateDir, () => writeFileDurable(adminUrlPath(stateDir), `${url}\n`, { mode: STATE_FILE_MODE }));

/** Removes the record when the server that wrote it stops (unless another server has replaced it). */
export async function forgetAdminUrl(stateDir: string, url: string): Promise<void> {
  await withStateLock(stateDir, async () => {
    if ((await readAdminUrl(stateDir).catch(() => undefined)) === url) await rm(adminUrlPath(stateDir), { force: true });
  });
}

export interface ResolvedToken {
  token: string;
  source: "option" | "environment" | "state" | "generated";
  /** Why a generated token could not be kept (it then lasts as long as the process). */
  persistError?: Error;
}

export async function resolveAdminToken(stateDir: string, given?: string, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedToken> {
  const fromEnv = env[ADMIN_TOKEN_ENV]?.trim();
  const chosen = given
    ? { token: given, source: "option" as const }
    : fromEnv
      ? { token: fromEnv, source: "environment" as const }
      : undefined;
  if (chosen) {
    const problem = adminTokenProblem(chosen.token);
    if (problem) throw new AdminTokenError(`${chosen.source === "option" ? "--admin-token" : ADMIN_TOKEN_ENV}: ${problem}`);
    return chosen;
  }
  const kept = await readAdminToken(stateDir);
  if (kept) return { token: kept, source: "state" };
  try {
    // Under the lock, read again: a server started at the same moment may have generated one.
    return await withStateLock(stateDir, async () => {
      const other = await readAdminToken(stateDir);
      if (other) return { token: other, source: "state" as const };
      const token = generateAdminToken();
      await writeFileDurable(adminTokenPath(stateDir), `${token}\n`, { mode: STATE_FILE_MODE });
      return { token, source: "generated" as const };
    });
  } catch (error) {
    if (error instanceof StateDirError) throw error;
    return { token: generateAdminToken(), source: "generated", persistError: error as Error };
  }
}

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/** Compares digests, so the time taken says nothing about how much of a guess was right. */
export const tokenMatches = (presented: string, token: string): boolean => timingSafeEqual(digest(presented), digest(token));
