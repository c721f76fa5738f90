/** Bytes -> text, strictly: invalid UTF-8 is a problem at its first bad byte (line:col), never text with U+FFFD in it. */

/** `fatal`: throws on the first invalid sequence; `ignoreBOM`: a BOM stays (the parser skips it, columns count without it). */
const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export type Decoded = { text: string } | { error: string; line: number; col: number };

export function decodeUtf8(bytes: Uint8Array): Decoded {
  try {
    return { text: STRICT.decode(bytes) };
  } catch {
    return invalidAt(bytes);
  }
}

/** Where the first invalid byte is: the lossy decoding walked code point by code point, its bytes counted alongside. */
function invalidAt(bytes: Uint8Array): Decoded {
  const lossy = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  let offset = 0;
  let line = 1;
  let col = 1;
  for (const char of lossy) {
    const written = char === "\uFFFD" && bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd;
    if (char === "\uFFFD" && !written) {
      const byte = bytes[offset]!.toString(16).padStart(2, "0");
      return { error: `not valid UTF-8: byte 0x${byte} at byte offset ${offset}; save the file as UTF-8`, line, col };
    }
    const code = char.codePointAt(0)!;
    offset += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (char === "\n") {
      line++;
      col = 1;
    } else col++;
  }
  return { error: "not valid UTF-8", line: 0, col: 0 };
}
