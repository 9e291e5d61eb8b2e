import { isAscii, isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { UsageError } from '../../errors.js';
import { canonicalEncoding } from './decode-text.js';
import { fileError } from './inspect-file.js';
import type { SourceInfo } from './types.js';

export interface DetectedEncoding {
  encoding: string;
  source: SourceInfo['encodingSource'];
  /** Bytes of BOM to skip before decoding. */
  bomLength: number;
  /** Why detection chose a single-byte encoding, shown beside it. */
  reason?: string;
  /**
   * The sample holds no multi-byte UTF-8 sequence but does not end the file: the rest of the
   * file decides (settleEncoding). `nonAscii`: the sample holds a byte ≥ 0x80.
   */
  undecided?: { nonAscii: boolean };
}

export const NO_UTF8_SEQUENCES = 'no UTF-8 sequences';

const BOMS: ReadonlyArray<{ encoding: string; bytes: readonly number[] }> = [
  { encoding: 'utf-8', bytes: [0xef, 0xbb, 0xbf] },
  { encoding: 'utf-16le', bytes: [0xff, 0xfe] },
  { encoding: 'utf-16be', bytes: [0xfe, 0xff] },
];

function bomOf(sample: Uint8Array): { encoding: string; length: number } | undefined {
  for (const bom of BOMS) {
    if (bom.bytes.every((byte, i) => sample[i] === byte))
      return { encoding: bom.encoding, length: bom.bytes.length };
  }
  return undefined;
}

/**
 * Picks the encoding from the first bytes of the file. `complete` says the sample is the
 * whole file, so a multi-byte sequence cut at its end is an error rather than the cut.
 *
 * Without a BOM, one valid multi-byte UTF-8 sequence makes the file UTF-8: windows-1252 text
 * almost never forms one (it takes e.g. "Ã©"), while a UTF-8 file with a stray byte is what
 * Excel pastes, concatenation and hand edits make. Its invalid bytes then make their rows
 * invalid instead of turning every accent into mojibake. windows-1252 is chosen only when the
 * file as a whole holds no such sequence; when the sample cannot tell, `undecided` asks
 * settleEncoding to look at the rest.
 */
export function detectEncoding(sample: Uint8Array, option: string | undefined, complete: boolean): DetectedEncoding {
  const bom = bomOf(sample);
  if (option !== undefined) {
    const encoding = canonicalEncoding(option);
    if (encoding === undefined) {
      throw new UsageError(
        `unknown encoding "${option}": use a WHATWG label such as utf-8, utf-16le, windows-1252, iso-8859-15`,
        'bad_encoding',
      );
    }
    // The user's word wins; a BOM is still skipped when it agrees with it.
    return { encoding, source: 'option', bomLength: bom?.encoding === encoding ? bom.length : 0 };
  }
  if (bom) return { encoding: bom.encoding, source: 'bom', bomLength: bom.length };
  const utf16 = guessBomlessUtf16(sample);
  if (utf16) return { encoding: utf16, source: 'detected', bomLength: 0 };
  const found = findUtf8Sequence(sample);
  if (found.multibyte) return { encoding: 'utf-8', source: 'detected', bomLength: 0 };
  if (!complete) return { encoding: 'utf-8', source: 'default', bomLength: 0, undecided: { nonAscii: found.nonAscii } };
  return decided(found.nonAscii);
}

/** No multi-byte UTF-8 sequence in the whole file: ASCII proves nothing, other bytes are windows-1252. */
function decided(nonAscii: boolean): DetectedEncoding {
  // Pure ASCII: UTF-8 is then an assumption, not a finding.
  if (!nonAscii) return { encoding: 'utf-8', source: 'default', bomLength: 0 };
  // The Windows ANSI code page is what Excel writes in Western Europe and the Americas, and
  // it decodes every byte (a superset of Latin-1).
  return { encoding: 'windows-1252', source: 'detected', bomLength: 0, reason: NO_UTF8_SEQUENCES };
}

const SCAN_BYTES = 1024 * 1024;

/**
 * Settles an `undecided` detection by reading the rest of the file (after the sample) up to
 * its first multi-byte UTF-8 sequence, or to its end (or a NUL): a file that is ASCII, or
 * windows-1252, in its first 64 KiB is read through once more before its first row. Chunks overlap by 3 bytes so that a
 * sequence across a boundary is seen whole.
 */
export async function settleEncoding(file: string, detected: DetectedEncoding, from: number): Promise<DetectedEncoding> {
  if (detected.undecided === undefined) return detected;
  let nonAscii = detected.undecided.nonAscii;
  const handle = await open(file, 'r').catch((error: unknown) => {
    throw fileError(file, error);
  });
  try {
    const buffer = Buffer.alloc(SCAN_BYTES);
    let position = Math.max(0, from - 3);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, SCAN_BYTES, position);
      // Reading stops at a NUL (input_binary): what follows it is never read as text.
      const nul = buffer.subarray(0, bytesRead).indexOf(0);
      const found = findUtf8Sequence(buffer.subarray(0, nul === -1 ? bytesRead : nul));
      if (found.multibyte) return { encoding: 'utf-8', source: 'detected', bomLength: 0 };
      nonAscii ||= found.nonAscii;
      if (nul !== -1 || bytesRead < SCAN_BYTES) break;
      position += bytesRead - 3;
    }
  } finally {
    await handle.close();
  }
  return decided(nonAscii);
}

/** Whether `bytes` hold a valid multi-byte UTF-8 sequence, and any byte ≥ 0x80 at all. */
export function findUtf8Sequence(bytes: Uint8Array): { multibyte: boolean; nonAscii: boolean } {
  // Native checks first: a chunk is nearly always all ASCII, or all valid.
  if (isAscii(bytes)) return { multibyte: false, nonAscii: false };
  if (isUtf8(bytes)) return { multibyte: true, nonAscii: true };
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i]! >= 0x80 && sequenceAt(bytes, i) > 1) return { multibyte: true, nonAscii: true };
  }
  return { multibyte: false, nonAscii: true };
}

/**
 * UTF-16 without a BOM shows as a NUL in every other byte of mostly-ASCII text; a courtesy,
 * since Excel and Notepad always write the BOM.
 */
function guessBomlessUtf16(sample: Uint8Array): string | undefined {
  const pairs = Math.floor(Math.min(sample.length, 1024) / 2);
  if (pairs < 4) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs; i++) {
    if (sample[2 * i] === 0) evenZeros++;
    if (sample[2 * i + 1] === 0) oddZeros++;
  }
  if (oddZeros / pairs > 0.3 && evenZeros / pairs < 0.02) return 'utf-16le';
  if (evenZeros / pairs > 0.3 && oddZeros / pairs < 0.02) return 'utf-16be';
  return undefined;
}

/**
 * The UTF-8 sequence at `bytes[i]` under WHATWG rules (no overlongs, surrogates or code points
 * above U+10FFFF): its length when valid (1 for ASCII); when not, minus the length of its
 * maximal invalid subpart, which is what one U+FFFD replaces; 0 when the end cuts it short.
 */
export function sequenceAt(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!;
  if (lead < 0x80) return 1;
  let need: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) need = 1;
  else if (lead >= 0xe0 && lead <= 0xef) need = 2;
  else if (lead >= 0xf0 && lead <= 0xf4) need = 3;
  else return -1;
  if (lead === 0xe0) low = 0xa0;
  else if (lead === 0xed) high = 0x9f;
  else if (lead === 0xf0) low = 0x90;
  else if (lead === 0xf4) high = 0x8f;
  for (let k = 1; k <= need; k++) {
    if (i + k >= bytes.length) return 0;
    const next = bytes[i + k]!;
    if (k === 1 ? next < low || next > high : next < 0x80 || next > 0xbf) return -k;
  }
  return need + 1;
}

/**
 * Index of the first byte that breaks UTF-8, or -1. A sequence cut by the end is valid when
 * `allowTruncatedEnd` (the sample stops mid-file).
 */
export function firstInvalidUtf8(bytes: Uint8Array, allowTruncatedEnd: boolean): number {
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceAt(bytes, i);
    if (length > 0) i += length;
    else return length === 0 && allowTruncatedEnd ? -1 : i;
  }
  return -1;
}
