/**
 * How a command knows that the server it is about to send the kept admin token to is one that
 * holds it, before sending it: a challenge. The command sends a fresh nonce; the server answers
 * HMAC-SHA256(token, nonce and the address and port the request arrived at, as its socket sees
 * them); the command computes the same with the address and port it is connected to, and sends
 * the token over that same connection only if they match. Whatever listens where a killed server
 * was cannot answer, and one that relays the challenge to the real server elsewhere gets an
 * answer for the real server's address, not its own. The answer tells nothing of the token.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { unmappedAddress } from "./addresses.js";

/** 256 bits, as URL-safe text. */
export const newNonce = (): string => randomBytes(32).toString("base64url");

export const isNonce = (text: string): boolean => /^[A-Za-z0-9_-]{16,128}$/.test(text);

/**
 * One end of a connection as both ends name it: `address:port`, an IPv4 address mapped into IPv6
 * (a dual-stack socket's view of an IPv4 peer) written as IPv4.
 */
export const connectionEnd = (address: string | undefined, port: number | undefined): string =>
  `${unmappedAddress(address ?? "")}:${port ?? 0}`;

/** The answer to `nonce` for a request that arrived at `end` (connectionEnd) of a server holding `token`. */
export const adminProof = (token: string, nonce: string, end: string): string =>
  createHmac("sha256", token).update(`flagserve-admin-proof\n${nonce}\n${end}`).digest("base64url");

/** Whether `proof` is the answer of a server holding `token`, reached at `end`. */
export function proofMatches(proof: unknown, token: string, nonce: string, end: string): boolean {
  if (typeof proof !== "string") return false;
  const expected = Buffer.from(adminProof(token, nonce, end));
  const given = Buffer.from(proof);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
