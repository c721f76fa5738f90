/** The character codes the fast path's checks look for (`text.charCodeAt(i) === HASH`). */
export const TAB = 9;
export const NL = 10;
export const CR = 13;
export const SPACE = 32;
export const DOUBLE = 34;
export const HASH = 35;
export const SINGLE = 39;
export const COMMA = 44;
export const DASH = 45;
export const COLON = 58;
export const OPEN_LIST = 91;
export const BACKSLASH = 92;
export const OPEN_MAP = 123;
