/**
 * The admin token: from `--admin-token` / `FLAGSERVE_ADMIN_TOKEN`, else generated once and kept
 * in the state directory beside the keys (0600), so the dashboard URL survives restarts. Each
 * server using the kept token records itself beside it (records.ts); the commands reading the
 * token send it only to a recorded server that first proves it holds it (proof.ts,
 * cli/admin-client.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { STATE_FILE_MODE, writeFileDurable } from "../store/durable-write.js";
import { readStateFile, StateDirError, withStateLock } from "../store/state-dir.js";
import { adminTokenProblem, givenAdminTokenProblem } from "./token-rules.js";

export const ADMIN_TOKEN_FILE = "admin-token";
export const ADMIN_TOKEN_ENV = "FLAGSERVE_ADMIN_TOKEN";

export const adminTokenPath = (stateDir: string): string => join(stateDir, ADMIN_TOKEN_FILE);

/** 256 bits, prefixed so a leaked token says what it is. */
export const generateAdminToken = (): string => `fsa_${randomBytes(32).toString("base64url")}`;

/** A token given as an option or in the environment that is too short to be one. */
export class AdminTokenError extends Error {}

/**
 * The token kept in the state directory, if there is one. A directory or file that is not
 * private, or a token that could not be one (too short: a file put there, or another file
 * renamed over it), is refused (StateDirError): it is never adopted, nor sent anywhere.
 */
export async function readAdminToken(stateDir: string): Promise<string | undefined> {
  const text = await readStateFile(stateDir, ADMIN_TOKEN_FILE);
  const token = text?.trim();
  if (token === undefined || token === "") return undefined;
  const problem = adminTokenProblem(token);
  if (problem)
    throw new StateDirError(
      `refusing state file ${adminTokenPath(stateDir)}: it does not hold an admin token (${problem}); remove it, and the next server generates one`,
    );
  return token;
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
    const problem = givenAdminTokenProblem(chosen.token);
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
