import { direct, type BuildState, type Compiled } from "./codegen.js";

type Affixed = (s: string, affix: string) => boolean;

/**
 * flagd's `starts_with` / `ends_with`: exactly two arguments, both strings. Anything else gives
 * null rather than false, so a rule never falls onto a missing "false" variant (flagd #1874).
 */
const compareStrings =
  (test: Affixed) =>
  (args: unknown): boolean | null => {
    if (!Array.isArray(args) || args.length !== 2) return null;
    const [s, affix] = args as unknown[];
    return typeof s === "string" && typeof affix === "string" ? test(s, affix) : null;
  };

/**
 * The same with a constant string affix, compiled to a direct call of the tested string alone
 * (no argument array per evaluation). Other forms take the generic call.
 */
const compileAffix =
  (test: Affixed) =>
  (args: unknown, build: BuildState): Compiled | false => {
    if (!Array.isArray(args) || args.length !== 2 || typeof args[1] !== "string") return false;
    const affix: string = args[1];
    const affixed = (s: unknown): boolean | null => (typeof s === "string" ? test(s, affix) : null);
    return build.compile`${direct(affixed)}(${args[0]})`;
  };

const startsWithTest: Affixed = (s, affix) => s.startsWith(affix);
const endsWithTest: Affixed = (s, affix) => s.endsWith(affix);

export const startsWith = compareStrings(startsWithTest);
export const endsWith = compareStrings(endsWithTest);
export const compileStartsWith = compileAffix(startsWithTest);
export const compileEndsWith = compileAffix(endsWithTest);
