/** Small helpers for untyped, JSON-like data: one place for them. */

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `record[key] = value` that also works for the key `__proto__` (a legal flag or segment name). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  // Plain assignment for every other key: the same own property, without a descriptor per call.
  if (key !== "__proto__") record[key] = value;
  else Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Code-point order: the same on every machine, whatever its locale. */
export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** JSON with object keys sorted at every level: equal data gives equal text, whatever the key order. */
export function canonicalJson(value: unknown, space?: number): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) =>
      v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => compare(a, b)))
        : v,
    space,
  );
}
