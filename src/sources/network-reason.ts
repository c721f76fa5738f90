/** Why a fetch threw, briefly: undici's `cause` (`ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`...), not its bare "fetch failed". */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
