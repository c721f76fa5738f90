/**
 * MurmurHash3 x86_32 of a string's UTF-8 bytes, computed from its UTF-16 code units as they are
 * read: no bytes are encoded into a buffer first, which made up a fifth of an evaluation pass
 * (encoding plus the hash's per-call overhead). A lone surrogate counts as U+FFFD, as
 * Buffer.from and TextEncoder encode it. Tested against the `murmurhash` package on the bytes.
 */
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

const rotl = (x: number, r: number): number => (x << r) | (x >>> (32 - r));
const mixed = (k: number): number => Math.imul(rotl(Math.imul(k, C1), 15), C2);
const round = (h: number, block: number): number => (Math.imul(rotl(h ^ mixed(block), 13), 5) + 0xe6546b64) | 0;

/** The UTF-8 bytes of code unit(s) at `i`, packed little-endian, with their count and the units used. */
function utf8At(text: string, i: number, c: number): [bytes: number, count: number, units: number] {
  if (c < 0x800) return [0xc0 | (c >> 6) | ((0x80 | (c & 63)) << 8), 2, 1];
  if (c >= 0xd800 && c <= 0xdfff) {
    const next = text.charCodeAt(i + 1); // NaN past the end
    if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return [0xef | (0xbf << 8) | (0xbd << 16), 3, 1]; // U+FFFD
    const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
    return [0xf0 | (cp >> 18) | ((0x80 | ((cp >> 12) & 63)) << 8) | ((0x80 | ((cp >> 6) & 63)) << 16) | ((0x80 | (cp & 63)) << 24), 4, 2];
  }
  return [0xe0 | (c >> 12) | ((0x80 | ((c >> 6) & 63)) << 8) | ((0x80 | (c & 63)) << 16), 3, 1];
}

/** The hash of `text`'s UTF-8 bytes. */
export const murmur3Utf8 = (text: string, seed = 0): number => murmur3Utf8Concat("", text, seed);

/** The code unit at `i` of `a + b`, without building that string. */
const unitAt = (a: string, b: string, i: number): number => (i < a.length ? a.charCodeAt(i) : b.charCodeAt(i - a.length));

/**
 * The hash of `a + b` (flagd buckets by flag key + targeting key), without building that string
 * (a concatenation is flattened, i.e. copied, on first read). ASCII text, the usual case, is one
 * byte per code unit and is hashed a 4-byte block at a time; anything else takes the general way.
 */
export function murmur3Utf8Concat(a: string, b: string, seed = 0): number {
  const length = a.length + b.length;
  let h = seed | 0;
  let i = 0;
  for (; i + 4 <= length; i += 4) {
    const c0 = unitAt(a, b, i);
    const c1 = unitAt(a, b, i + 1);
    const c2 = unitAt(a, b, i + 2);
    const c3 = unitAt(a, b, i + 3);
    if ((c0 | c1 | c2 | c3) >= 0x80) return murmur3Text(a + b, seed);
    h = round(h, c0 | (c1 << 8) | (c2 << 16) | (c3 << 24));
  }
  if (i < length) {
    let block = 0;
    for (let j = 0; i + j < length; j++) {
      const c = unitAt(a, b, i + j);
      if (c >= 0x80) return murmur3Text(a + b, seed);
      block |= c << (8 * j);
    }
    h ^= mixed(block);
  }
  return finish(h, length);
}

function finish(hash: number, length: number): number {
  let h = hash ^ length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Any text, one UTF-8 byte at a time. */
function murmur3Text(text: string, seed: number): number {
  let h = seed | 0;
  let block = 0;
  let filled = 0; // bits of `block`
  let length = 0; // bytes
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      // ASCII, the usual case: one byte.
      block |= c << filled;
      i++;
      length++;
      if ((filled += 8) === 32) {
        h = round(h, block);
        block = filled = 0;
      }
      continue;
    }
    const [bytes, count, units] = utf8At(text, i, c);
    i += units;
    for (let j = 0; j < count; j++) {
      block |= ((bytes >>> (8 * j)) & 0xff) << filled;
      length++;
      if ((filled += 8) === 32) {
        h = round(h, block);
        block = filled = 0;
      }
    }
  }
  if (filled > 0) h ^= mixed(block);
  return finish(h, length);
}
