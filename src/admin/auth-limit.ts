/**
 * Failed admin authentications, counted per source in a fixed window: past the limit the source
 * is answered 429 with Retry-After until its window ends, so a token cannot be guessed at the
 * speed of the loopback interface. A source is what one client can cheaply change its address
 * within (limitSource): all of loopback is one, an IPv6 address counts by its /64. The table
 * holds at most `maxClients` sources (the oldest window is forgotten first), so memory stays
 * bounded under any load.
 */
import { isIPv4 } from "node:net";
import { isLoopbackAddress } from "../http/hosts.js";
import { ipv6Groups, unmappedAddress } from "./addresses.js";

/**
 * What failures from `address` are counted against: "loopback" for 127.0.0.0/8, ::1 and their
 * IPv4-mapped forms (any local process can use any of them); an IPv4-mapped address as its IPv4
 * address; another IPv6 address as its /64 (one host's allotment); anything else (an IPv4
 * address, a --client-ip-header value that is no address) as itself.
 */
export function limitSource(address: string): string {
  if (isLoopbackAddress(address)) return "loopback";
  const unmapped = unmappedAddress(address);
  if (isIPv4(unmapped)) return unmapped;
  const groups = ipv6Groups(address);
  if (groups === undefined) return address;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}
export interface AuthLimitOptions {
  /** Failures allowed per address and window. */
  maxFailures?: number;
  windowMs?: number;
  maxClients?: number;
  now?: () => number;
}

export const ADMIN_AUTH_MAX_FAILURES = 20;
export const ADMIN_AUTH_WINDOW_MS = 60_000;

export class FailedAuthLimiter {
  readonly #failures = new Map<string, { count: number; start: number }>();
  readonly #max: number;
  readonly #windowMs: number;
  readonly #maxClients: number;
  readonly #now: () => number;

  constructor({
    maxFailures = ADMIN_AUTH_MAX_FAILURES,
    windowMs = ADMIN_AUTH_WINDOW_MS,
    maxClients = 4096,
    now = Date.now,
  }: AuthLimitOptions = {}) {
    this.#max = maxFailures;
    this.#windowMs = windowMs;
    this.#maxClients = maxClients;
    this.#now = now;
  }

  /** Seconds until `address` (its source: limitSource) may try again, or undefined when it may now. */
  retryAfter(address: string): number | undefined {
    const source = limitSource(address);
    const entry = this.#failures.get(source);
    if (!entry) return undefined;
    const left = entry.start + this.#windowMs - this.#now();
    if (left <= 0) {
      this.#failures.delete(source);
      return undefined;
    }
    return entry.count >= this.#max ? Math.ceil(left / 1000) : undefined;
  }

  /** One more failed authentication from `address` (counted against its source). */
  fail(address: string): void {
    const source = limitSource(address);
    const now = this.#now();
    const entry = this.#failures.get(source);
    if (entry && now - entry.start < this.#windowMs) {
      entry.count++;
      return;
    }
    this.#failures.delete(source);
    if (this.#failures.size >= this.#maxClients) this.#failures.delete(this.#failures.keys().next().value!);
    this.#failures.set(source, { count: 1, start: now });
  }

  /** Sources currently remembered (for tests and metrics). */
  get size(): number {
    return this.#failures.size;
  }
}
