/**
 * Why a fetch threw, briefly: what undici puts in `cause` (`ECONNREFUSED`, `ENOTFOUND`,
 * `CERT_HAS_EXPIRED`...) rather than its bare "fetch failed", else the message. Used by every
 * fetching part: URL sources, notification delivery, `flagserve events`.
 */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
