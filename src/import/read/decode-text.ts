/**
 * Byte → text decoding that streams. Node 20's TextDecoder takes a latin1 fast path for
 * `windows-1252` (and every label aliased to it: latin1, ascii, iso-8859-1…) when called
 * without `{stream: true}`, turning € ‘ ’ “ ” – — Œ (0x80–0x9F) into C1 control characters.
 * Those are exactly what Excel and Word write, so windows-1252 gets its own table here.
 */

export interface TextDecoderLike {
  /** The WHATWG name of the encoding, e.g. 'utf-8', 'utf-16le', 'windows-1252'. */
  readonly encoding: string;
  /** Decode one chunk; pass `last` on the final call so a truncated sequence is an error. */
  decode(bytes: Uint8Array, last?: boolean): string;
}

// WHATWG windows-1252 code points for bytes 0x80–0x9F; the rest of the table is latin1.
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d,
  0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a,
  0x153, 0x9d, 0x17e, 0x178,
];
const C1_RANGE = /[\u0080-\u009f]/g;

export function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(C1_RANGE, (c) => String.fromCharCode(CP1252_HIGH[c.charCodeAt(0) - 0x80]!));
}

/** The WHATWG name for a label, or undefined when the label is unknown. */
export function canonicalEncoding(label: string): string | undefined {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
}

/**
 * A fatal (never silently replacing) decoder for a canonical encoding name: a wrong byte
 * throws, so the caller can name the line.
 */
export function createDecoder(encoding: string): TextDecoderLike {
  if (encoding === 'windows-1252') {
    // Single-byte: every byte decodes and no state crosses chunk boundaries.
    return { encoding, decode: (bytes) => decodeWindows1252(bytes) };
  }
  // The caller skips the BOM bytes itself, so a U+FEFF further on is data.
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  return {
    encoding,
    decode: (bytes, last = false) => decoder.decode(bytes, { stream: !last }),
  };
}
