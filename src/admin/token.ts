/**
 * The admin token: from `--admin-token` / `FLAGSERVE_ADMIN_TOKEN`, else generated once and kept
 * in the state directory beside the keys (mode 0600), so the dashboard URL survives restarts.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";

export const ADMIN_TOKEN_FILE = "admin-token";
export const ADMIN_TOKEN_ENV = "FLAGSERVE_ADMIN_TOKEN";

export const adminTokenPath = (stateDir: string): string => join(stateDir, ADMIN_TOKEN_FILE);

/** 256 bits, prefixed so a leaked token says what it is. */
export const generateAdminToken = (): string => `fsa_${randomBytes(32).toString("base64url")}`;

/** The token kept in the state directory, if there is one. */
export async function readAdminToken(stateDir: string): Promise<string | undefined> {
  try {
    const token = (await readFile(adminTokenPath(stateDir), "utf8")).trim();
    return token === "" ? undefined : token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

export interface ResolvedToken {
  token: string;
  source: "option" | "environment" | "state" | "generated";
  /** Why a generated token could not be kept (it then lasts as long as the process). */
  persistError?: Error;
}

export async function resolveAdminToken(stateDir: string, given?: string, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedToken> {
  if (given) return { token: given, source: "option" };
  const fromEnv = env[ADMIN_TOKEN_ENV]?.trim();
  if (fromEnv) return { token: fromEnv, source: "environment" };
  const kept = await readAdminToken(stateDir).catch(() => undefined);
  if (kept) return { token: kept, source: "state" };
  const token = generateAdminToken();
  try {
    await mkdir(stateDir, { recursive: true });
    await writeFileAtomic(adminTokenPath(stateDir), `${token}\n`, { mode: 0o600 });
    return { token, source: "generated" };
  } catch (error) {
    return { token, source: "generated", persistError: error as Error };
  }
}

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/** Compares digests, so the time taken says nothing about how much of a guess was right. */
export const tokenMatches = (presented: string, token: string): boolean => timingSafeEqual(digest(presented), digest(token));
