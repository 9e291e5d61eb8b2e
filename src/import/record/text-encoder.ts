/**
 * Text → bytes in the input's own encoding, for the --failed file (a German Excel CSV comes back
 * as windows-1252 with `;`, as it went in). Node encodes only UTF-8, UTF-16LE and Latin-1; a
 * single-byte WHATWG encoding (windows-1252, iso-8859-2…) is encoded with the inverse of its
 * decoder's table (the reader's own decoder: Node's takes a latin1 shortcut for windows-1252). Multi-byte legacy encodings (Shift_JIS, GBK…) have no encoder here: those
 * files, and any value an encoding cannot hold, are written as UTF-8 with a BOM instead.
 */

import { createDecoder, type TextDecoderLike } from '../read/index.js';

/** Bytes, or undefined when a character has no byte in the encoding. */
export type Encode = (text: string) => Buffer | undefined;

export interface TextEncoding {
  /** The WHATWG name written (what the reader will detect or be told). */
  name: string;
  bom: Buffer;
  encode: Encode;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export const UTF8_WITH_BOM: TextEncoding = { name: 'utf-8', bom: UTF8_BOM, encode: (text) => Buffer.from(text, 'utf8') };

/** The encoder for `name` (as SourceInfo reports it), or undefined when there is none. */
export function encoderFor(name: string, hadBom: boolean): TextEncoding | undefined {
  switch (name) {
    case 'utf-8':
      return hadBom ? UTF8_WITH_BOM : { name, bom: Buffer.alloc(0), encode: (text) => Buffer.from(text, 'utf8') };
    case 'utf-16le':
      return { name, bom: Buffer.from([0xff, 0xfe]), encode: (text) => Buffer.from(text, 'utf16le') };
    case 'utf-16be':
      return { name, bom: Buffer.from([0xfe, 0xff]), encode: (text) => Buffer.from(text, 'utf16le').swap16() };
    default: {
      const table = singleByteTable(name);
      return table && { name, bom: Buffer.alloc(0), encode: (text) => encodeSingleByte(text, table) };
    }
  }
}

/** Character → byte, from decoding each of the 256 bytes; undefined for a multi-byte encoding. */
const MULTI_BYTE = new Set(['shift_jis', 'euc-jp', 'iso-2022-jp', 'gbk', 'gb18030', 'big5', 'euc-kr']);

function singleByteTable(name: string): Map<number, number> | undefined {
  if (MULTI_BYTE.has(name)) return undefined;
  let decoder: TextDecoderLike;
  try {
    decoder = createDecoder(name);
  } catch {
    return undefined;
  }
  const table = new Map<number, number>();
  for (let byte = 0; byte < 256; byte++) {
    let text: string;
    try {
      text = decoder.decode(Uint8Array.of(byte), true);
    } catch {
      // A byte the encoding leaves unmapped; below 0x80 it means this is no ASCII-based single-byte encoding.
      if (byte < 0x80) return undefined;
      continue;
    }
    if (text.length !== 1) return undefined;
    const code = text.charCodeAt(0);
    if (!table.has(code)) table.set(code, byte);
  }
  return table;
}

function encodeSingleByte(text: string, table: Map<number, number>): Buffer | undefined {
  const out = Buffer.allocUnsafe(text.length);
  for (let i = 0; i < text.length; i++) {
    const byte = table.get(text.charCodeAt(i));
    if (byte === undefined) return undefined;
    out[i] = byte;
  }
  return out;
}
