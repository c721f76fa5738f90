/**
 * Whether a rule can see `$flagd.timestamp`, i.e. whether its result may change with the clock
 * for the same flag and context. Answers built from clock-free rules may be reused for as long
 * as the snapshot lives (see answers/bulk.ts); the others only within the same second.
 *
 * Conservative: any data access whose path is computed, names the whole data (`""`, no
 * argument) or anything under `$flagd` other than `$flagd.flagKey` counts as reading the clock.
 */

/** The JsonLogic operators that read the data by a path (json-logic-engine 5). */
const ACCESS = new Set(["var", "val", "exists", "missing", "missing_some", "get"]);

const isLiteral = (x: unknown): boolean =>
  x === null || ["string", "number", "boolean"].includes(typeof x) || (Array.isArray(x) && x.every(isLiteral));

const strings = (x: unknown): string[] => (typeof x === "string" ? [x] : Array.isArray(x) ? x.flatMap(strings) : []);

/**
 * A literal path argument that may reach the clock: no name at all (the whole data, or a whole
 * enclosing scope with `val`'s `[[-1]]`), an empty name, or `$flagd` past `flagKey`, also from
 * inside an iterator (`../` climbs to the enclosing scope, which may be the data itself).
 */
function pathReachesClock(x: unknown): boolean {
  const names = strings(x).map((name) => name.replace(/^(?:\.\.\/)+/, ""));
  return names.length === 0 || names.some((name) => name === "" || (name.startsWith("$flagd") && name !== "$flagd.flagKey"));
}

function accessReadsClock(args: unknown): boolean {
  if (!isLiteral(args)) return true;
  return pathReachesClock(args);
}

/**
 * `segment` says whether an operator that stands for a compiled segment (see compile.ts) reads
 * the clock; undefined for any other operator.
 */
export function readsClock(rule: unknown, segment: (op: string) => boolean | undefined = () => undefined): boolean {
  if (Array.isArray(rule)) return rule.some((item) => readsClock(item, segment));
  if (rule === null || typeof rule !== "object") return false;
  for (const [op, args] of Object.entries(rule)) {
    const inSegment = segment(op);
    if (inSegment === true) return true;
    // `get` reads from an object argument, never from the data: only its inner accesses matter.
    if (inSegment === undefined && op !== "get" && ACCESS.has(op) && accessReadsClock(args)) return true;
    if (readsClock(args, segment)) return true;
  }
  return false;
}
