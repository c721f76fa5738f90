// The parse function alone (with the SemVer class it returns), not the package's index, which
// loads every function and range class of the package: half the modules at start-up.
import parseSemver from "semver/functions/parse.js";
import type SemVer from "semver/classes/semver.js";
import { direct, isConstant, type BuildState, type Compiled } from "./codegen.js";

/**
 * flagd's `sem_ver`: `[version, op, version]`. flagd validates with Go's golang.org/x/mod/semver,
 * which is not npm semver, so its accepted forms are reproduced here before handing a full
 * version to the `semver` package for the comparison itself (same SemVer 2.0 precedence; build
 * metadata ignored).
 */

// x/mod/semver: vMAJOR[.MINOR[.PATCH[-PRERELEASE][+BUILD]]], no leading zeros, nothing else
// (prerelease/build only after a full MAJOR.MINOR.PATCH; "2.0.0.0" and whitespace are invalid).
const GO_SEMVER =
  /^(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)?)?$/;

/**
 * Versions already parsed, by their text: a rule's constant operand and the context's version
 * (read by every sem_ver flag) are parsed once, not on every evaluation. Bounded: emptied when
 * full, and texts longer than any valid version (semver's 256) are not kept.
 */
const parsed = new Map<string, SemVer | null>();
const MAX_PARSED = 10_000;
const MAX_VERSION_LENGTH = 256;
/** The text parseVersion was last given, and its version. */
let lastText: string | undefined;
let lastVersion: SemVer | null = null;

/**
 * The version as flagd sees it, or null when flagd would reject it.
 * Numbers are stringified like Go's `%v` (1 -> "1", 1.2 -> "1.2"); Go switches to exponent form
 * ("1e+06") from 1e6 on, which is never a valid version, so those are rejected too.
 * The result is shared between calls: never modify it.
 */
export function parseVersion(input: unknown): SemVer | null {
  const s = versionText(input);
  if (s === undefined) return null;
  // An evaluation pass reads one context's version for every sem_ver flag: the same string
  // object, which compares at once, where a lookup hashes it.
  if (s === lastText) return lastVersion;
  let version = parsed.get(s);
  if (version === undefined) {
    version = parseGoSemver(s);
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(s, version);
  }
  lastText = s;
  lastVersion = version;
  return version;
}

/** The text of a version operand, or undefined when it cannot be one. */
function versionText(input: unknown): string | undefined {
  let s: string;
  if (typeof input === "string") s = input;
  else if (typeof input === "number" && Number.isFinite(input) && Math.abs(input) < 1e6) s = String(input);
  else return undefined;
  return s.length > MAX_VERSION_LENGTH + 1 ? undefined : s;
}

/** parseVersion without the shared cache: for a rule's constant operand, kept by its compiled rule. */
function parseText(input: unknown): SemVer | null {
  const s = versionText(input);
  return s === undefined ? null : parseGoSemver(s);
}

function parseGoSemver(text: string): SemVer | null {
  let s = text;
  if (s.startsWith("v") || s.startsWith("V")) s = s.slice(1);
  const m = GO_SEMVER.exec(s);
  if (!m) return null;
  const [, major, minor = "0", patch = "0", pre = "", build = ""] = m;
  // The semver package also enforces SemVer's rules on prerelease identifiers (no leading zeros
  // in numeric ones) as x/mod/semver does; it additionally caps numbers at 2^53-1.
  return parseSemver(`${major}.${minor}.${patch}${pre}${build}`);
}

type Comparison = (a: SemVer, b: SemVer) => boolean;

// `~` and `^` are flagd's, not npm's: equal major.minor, and equal major.
// `a.compare(b)` is what semver.compare(a, b) does once both are SemVer objects.
const OPERATORS: Record<string, Comparison> = {
  "=": (a, b) => a.compare(b) === 0,
  "!=": (a, b) => a.compare(b) !== 0,
  "<": (a, b) => a.compare(b) < 0,
  "<=": (a, b) => a.compare(b) <= 0,
  ">": (a, b) => a.compare(b) > 0,
  ">=": (a, b) => a.compare(b) >= 0,
  "~": (a, b) => a.major === b.major && a.minor === b.minor,
  "^": (a, b) => a.major === b.major,
};

/** null (not false) on the wrong number of arguments, an unknown operator or an invalid version. */
export function semVer(args: unknown): boolean | null {
  if (!Array.isArray(args) || args.length !== 3) return null;
  const [left, op, right] = args as unknown[];
  const compare = typeof op === "string" && Object.hasOwn(OPERATORS, op) ? OPERATORS[op] : undefined;
  if (!compare) return null;
  const a = parseVersion(left);
  const b = parseVersion(right);
  return a && b ? compare(a, b) : null;
}

/**
 * The usual form, `[<expression>, "op", "constant version"]` (or the constant on the left),
 * compiled to a direct call of the other operand with the operator looked up and the constant
 * parsed when the rule is built. Other forms take the generic call.
 */
export function compileSemVer(args: unknown, build: BuildState): Compiled | false {
  if (!Array.isArray(args) || args.length !== 3) return false;
  const [left, op, right] = args as unknown[];
  const compare = typeof op === "string" && Object.hasOwn(OPERATORS, op) ? OPERATORS[op] : undefined;
  if (compare === undefined) return false;
  if (isConstant(right)) {
    const b = parseText(right);
    const againstRight = (a: unknown): boolean | null => {
      const version = parseVersion(a);
      return version && b ? compare(version, b) : null;
    };
    return build.compile`${direct(againstRight)}(${left})`;
  }
  if (isConstant(left)) {
    const a = parseText(left);
    const fromLeft = (b: unknown): boolean | null => {
      const version = parseVersion(b);
      return a && version ? compare(a, version) : null;
    };
    return build.compile`${direct(fromLeft)}(${right})`;
  }
  return false;
}
