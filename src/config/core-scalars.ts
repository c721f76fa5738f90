/**
 * The implicit types of plain scalars in YAML 1.2's core schema, as the `yaml` package resolves
 * them (yaml/dist/schema/core and common/null), in the order it tries them: js-yaml reads the
 * fast path's files with these (fast-parse.ts), so that it cannot drift from `yaml`.
 */
export interface CoreScalar {
  tag: string;
  /** Turns most scalars (words) away before any form is tried. */
  first: RegExp;
  /** Each form's test and how it is read; the first form that matches resolves. */
  forms: [RegExp, (text: string) => unknown][];
}

export const CORE_SCALARS: readonly CoreScalar[] = [
  { tag: "null", first: /^(?:$|[~nN])/, forms: [[/^(?:~|[Nn]ull|NULL)?$/, () => null]] },
  { tag: "bool", first: /^[tTfF]/, forms: [[/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (text) => text[0] === "t" || text[0] === "T"]] },
  {
    tag: "int",
    first: /^[-+0-9]/,
    forms: [
      [/^0o[0-7]+$/, (text) => parseInt(text.substring(2), 8)],
      [/^[-+]?[0-9]+$/, (text) => parseInt(text, 10)],
      [/^0x[0-9a-fA-F]+$/, (text) => parseInt(text.substring(2), 16)],
    ],
  },
  {
    tag: "float",
    first: /^[-+.0-9]/,
    forms: [
      [
        /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
        (text) => (text.slice(-3).toLowerCase() === "nan" ? NaN : text[0] === "-" ? -Infinity : Infinity),
      ],
      [/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, parseFloat],
      [/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, parseFloat],
    ],
  },
];

/** A letter no core type's scalar starts with (all but f, n, t, either case): most words. */
const isWordStart = (c: number): boolean =>
  (c >= 97 && c <= 122 && c !== 102 && c !== 110 && c !== 116) || (c >= 65 && c <= 90 && c !== 70 && c !== 78 && c !== 84);

/**
 * The value of a plain scalar: the first type with a matching form, else the text itself.
 * Most are settled by their first character (n and ~: only null can match, t and f: only bool,
 * and only a digit, a sign or a dot can start a number).
 */
export function plainScalarValue(text: string): unknown {
  const c = text.charCodeAt(0);
  if (isWordStart(c)) return text;
  if (c === 110 || c === 78) return text === "null" || text === "Null" || text === "NULL" ? null : text; // n N
  if (c === 116 || c === 84) return text === "true" || text === "True" || text === "TRUE" ? true : text; // t T
  if (c === 102 || c === 70) return text === "false" || text === "False" || text === "FALSE" ? false : text; // f F
  if (c === 126) return text === "~" ? null : text;
  // Only int and float start with a digit, a sign or a dot; anything else is a string ("" is null).
  if (!((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return text === "" ? null : text;
  for (const { first, forms } of CORE_SCALARS) {
    if (!first.test(text)) continue;
    for (const [test, construct] of forms) if (test.test(text)) return construct(text);
  }
  return text;
}
