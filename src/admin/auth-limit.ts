/**
 * Failed admin authentications, counted per client address in a fixed window: past the limit
 * the address is answered 429 with Retry-After until its window ends, so a token cannot be
 * guessed at the speed of the loopback interface. The table holds at most `maxClients`
 * addresses (the oldest window is forgotten first), so memory stays bounded under any load.
 */
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

  /** Seconds until `address` may try again, or undefined when it may now. */
  retryAfter(address: string): number | undefined {
    const entry = this.#failures.get(address);
    if (!entry) return undefined;
    const left = entry.start + this.#windowMs - this.#now();
    if (left <= 0) {
      this.#failures.delete(address);
      return undefined;
    }
    return entry.count >= this.#max ? Math.ceil(left / 1000) : undefined;
  }

  /** One more failed authentication from `address`. */
  fail(address: string): void {
    const now = this.#now();
    const entry = this.#failures.get(address);
    if (entry && now - entry.start < this.#windowMs) {
      entry.count++;
      return;
    }
    this.#failures.delete(address);
    if (this.#failures.size >= this.#maxClients) this.#failures.delete(this.#failures.keys().next().value!);
    this.#failures.set(address, { count: 1, start: now });
  }

  /** Addresses currently remembered (for tests and metrics). */
  get size(): number {
    return this.#failures.size;
  }
}
