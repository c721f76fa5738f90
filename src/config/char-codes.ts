/** The character codes the YAML readers look for (`text.charCodeAt(i) === HASH`). */
export const TAB = 9;
export const NL = 10;
export const CR = 13;
export const SPACE = 32;
export const DOUBLE = 34;
export const HASH = 35;
export const PERCENT = 37;
export const SINGLE = 39;
export const COMMA = 44;
export const DASH = 45;
export const DOT = 46;
export const COLON = 58;
export const OPEN_LIST = 91;
export const BACKSLASH = 92;
export const CLOSE_LIST = 93;
export const OPEN_MAP = 123;
export const CLOSE_MAP = 125;
