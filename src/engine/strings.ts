/**
 * flagd's `starts_with` / `ends_with`: exactly two arguments, both strings. Anything else gives
 * null rather than false, so a rule never falls onto a missing "false" variant (flagd #1874).
 */
const compareStrings =
  (test: (s: string, affix: string) => boolean) =>
  (args: unknown): boolean | null => {
    if (!Array.isArray(args) || args.length !== 2) return null;
    const [s, affix] = args as unknown[];
    return typeof s === "string" && typeof affix === "string" ? test(s, affix) : null;
  };

export const startsWith = compareStrings((s, affix) => s.startsWith(affix));
export const endsWith = compareStrings((s, affix) => s.endsWith(affix));
