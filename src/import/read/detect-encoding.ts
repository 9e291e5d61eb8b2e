import { UsageError } from '../../errors.js';
import { canonicalEncoding } from './decode-text.js';
import type { SourceInfo } from './types.js';

export interface DetectedEncoding {
  encoding: string;
  source: SourceInfo['encodingSource'];
  /** Bytes of BOM to skip before decoding. */
  bomLength: number;
}

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
 */
export function detectEncoding(
  sample: Uint8Array,
  option: string | undefined,
  complete: boolean,
): DetectedEncoding {
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
  const invalidAt = firstInvalidUtf8(sample, !complete);
  if (invalidAt === -1) {
    // Pure ASCII proves nothing: UTF-8 is then an assumption, not a finding.
    const ascii = sample.every((byte) => byte < 0x80);
    return { encoding: 'utf-8', source: ascii ? 'default' : 'detected', bomLength: 0 };
  }
  // Not UTF-8: the Windows ANSI code page is what Excel writes in Western Europe and the
  // Americas, and it decodes every byte (a superset of Latin-1).
  return { encoding: 'windows-1252', source: 'detected', bomLength: 0 };
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
 * Index of the first byte that breaks UTF-8 (WHATWG rules: no overlongs, surrogates or
 * code points above U+10FFFF), or -1. A sequence cut by the end is valid when
 * `allowTruncatedEnd` (the sample stops mid-file).
 */
export function firstInvalidUtf8(bytes: Uint8Array, allowTruncatedEnd: boolean): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) need = 1;
    else if (lead >= 0xe0 && lead <= 0xef) need = 2;
    else if (lead >= 0xf0 && lead <= 0xf4) need = 3;
    else return i;
    if (lead === 0xe0) low = 0xa0;
    else if (lead === 0xed) high = 0x9f;
    else if (lead === 0xf0) low = 0x90;
    else if (lead === 0xf4) high = 0x8f;
    for (let k = 1; k <= need; k++) {
      if (i + k >= n) return allowTruncatedEnd ? -1 : i;
      const next = bytes[i + k]!;
      if (k === 1 ? next < low || next > high : next < 0x80 || next > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}
