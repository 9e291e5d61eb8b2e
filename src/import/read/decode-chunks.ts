import { isUtf8 } from 'node:buffer';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { createDecoder } from './decode-text.js';
import { firstInvalidUtf8, sequenceAt } from './detect-encoding.js';
import type { InvalidByteQueue } from './invalid-bytes.js';

const CR = 13;
const LF = 10;

/**
 * Counts physical lines the way csv-parse does: CRLF, LF and a lone CR each end one. Works on
 * UTF-8 bytes (CR and LF are the same code units in the text).
 */
export class LineCounter {
  /** The 1-based line the next byte is on. */
  line = 1;
  /** The last byte so far was a CR (a LF next is the same line break). */
  pendingCr = false;

  /** Line of `bytes[index]` if `bytes` were the next bytes; does not advance. */
  lineAt(bytes: Uint8Array, index: number): number {
    return this.line + countBreaks(bytes, index, this.pendingCr).breaks;
  }

  advance(bytes: Uint8Array): void {
    const { breaks, endsWithCr } = countBreaks(bytes, bytes.length, this.pendingCr);
    this.line += breaks;
    this.pendingCr = endsWithCr;
  }
}

/** Line breaks in `text`, CRLF counting as one. */
export function lineBreaks(text: string): number {
  if (!text.includes('\n') && !text.includes('\r')) return 0;
  let breaks = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === CR || (c === LF && text.charCodeAt(i - 1) !== CR)) breaks++;
  }
  return breaks;
}

function countBreaks(bytes: Uint8Array, to: number, pendingCr: boolean): { breaks: number; endsWithCr: boolean } {
  if (to === 0) return { breaks: 0, endsWithCr: pendingCr };
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, to);
  let breaks = 0;
  if (view.indexOf(CR) === -1) {
    // The common case, counted natively: LF endings only.
    for (let at = view.indexOf(LF); at !== -1; at = view.indexOf(LF, at + 1)) breaks++;
    if (pendingCr && view[0] === LF) breaks--;
    return { breaks, endsWithCr: false };
  }
  let previousCr = pendingCr;
  for (let i = 0; i < to; i++) {
    const c = view[i];
    if (c === CR) breaks++;
    else if (c === LF && !previousCr) breaks++;
    previousCr = c === CR;
  }
  return { breaks, endsWithCr: previousCr };
}

/**
 * Turns a byte stream in `encoding` into UTF-8 bytes for the parser, chunk by chunk (never the
 * whole file), and refuses what a CSV cannot hold: NUL characters, and bytes that are not
 * valid in an encoding other than UTF-8. UTF-8 input is only validated, not decoded: each
 * invalid sequence becomes U+FFFD and is logged in `invalid` with its line, so that its row
 * is invalid rather than the file (see InvalidByteQueue). On a fault the bytes before it are
 * yielded first, so the records before the broken line still reach the importer, then an
 * InputError names the line.
 */
export async function* utf8Chunks(
  chunks: AsyncIterable<Uint8Array>,
  encoding: string,
  file: string,
  invalid: InvalidByteQueue,
  startLine = 1,
): AsyncGenerator<Buffer> {
  const lines = new LineCounter();
  lines.line = startLine;
  const decode = encoding === 'utf-8' ? utf8Validator() : reencoder(encoding);
  let last = false;
  const iterator = chunks[Symbol.asyncIterator]();
  while (!last) {
    const next = await iterator.next();
    last = next.done === true;
    const decoded = decode(next.done ? Buffer.alloc(0) : asBuffer(next.value), last);
    const { bytes, fault } = decoded;
    // Logged before the chunk is yielded: the parser looks for them as it makes its records.
    if (decoded.replaced) logReplaced(invalid, lines, bytes, decoded.replaced);
    const nul = bytes.indexOf(0);
    if (nul === -1 && !fault) {
      if (bytes.length > 0) yield bytes;
      lines.advance(bytes);
      continue;
    }
    // Only the whole lines before the fault: a record cut by it must not reach the parser.
    const whole = wholeLines(bytes, nul === -1 ? bytes.length : nul);
    if (whole > 0) yield bytes.subarray(0, whole);
    if (nul !== -1) {
      const line = lines.lineAt(bytes, nul);
      throw new InputError(
        `${shownPath(file)}: contains NUL bytes (line ${line}): is this really a CSV file?`,
        'input_binary',
        { file, line },
      );
    }
    if (fault) {
      const line = lines.lineAt(bytes, bytes.length);
      throw new InputError(`${shownPath(file)}: line ${line}: ${fault}`, 'input_encoding', { file, line });
    }
    lines.advance(bytes);
  }
}

function logReplaced(invalid: InvalidByteQueue, lines: LineCounter, bytes: Buffer, replaced: Replaced[]): void {
  // One pass over the chunk however many there are (a windows-1252 half has thousands).
  const cursor = new LineCounter();
  cursor.line = lines.line;
  cursor.pendingCr = lines.pendingCr;
  let from = 0;
  for (const { at, original } of replaced) {
    cursor.advance(bytes.subarray(from, at));
    from = at;
    invalid.push(cursor.line, original);
  }
}

/** Length of `bytes[0, end)` up to and including its last line break (0 when it has none). */
function wholeLines(bytes: Buffer, end: number): number {
  if (end === 0) return 0;
  return Math.max(bytes.lastIndexOf(LF, end - 1), bytes.lastIndexOf(CR, end - 1)) + 1;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** An invalid UTF-8 sequence replaced by U+FFFD: where the U+FFFD is in the output, and the bytes it stands for. */
interface Replaced {
  at: number;
  original: string;
}

/**
 * One chunk as UTF-8: with its invalid UTF-8 sequences `replaced`, or cut before a `fault`
 * (what is wrong with the bytes after it) in other encodings.
 */
type ChunkDecoder = (bytes: Buffer, last: boolean) => { bytes: Buffer; fault?: string; replaced?: Replaced[] };

/**
 * UTF-8 keeps its own carry of an incomplete trailing sequence, so that a character cut by a
 * chunk boundary is judged whole; a sequence the end of the file cuts is invalid.
 */
function utf8Validator(): ChunkDecoder {
  let carry = Buffer.alloc(0);
  return (chunk, last) => {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const cut = last ? bytes.length : completeUtf8Length(bytes);
    carry = Buffer.from(bytes.subarray(cut));
    const whole = bytes.subarray(0, cut);
    return isUtf8(whole) ? { bytes: whole } : replaceInvalidUtf8(whole);
  };
}

const REPLACEMENT = Buffer.from('\uFFFD');

/** `bytes` with each invalid sequence (WHATWG's maximal subpart) replaced by U+FFFD, as TextDecoder would. */
export function replaceInvalidUtf8(bytes: Uint8Array): { bytes: Buffer; replaced: Replaced[] } {
  const parts: Uint8Array[] = [];
  const replaced: Replaced[] = [];
  let size = 0;
  let from = 0;
  let i = Math.max(0, firstInvalidUtf8(bytes, false));
  while (i < bytes.length) {
    const length = sequenceAt(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    // 0: cut by the end of the file, all of it one invalid sequence.
    const end = length === 0 ? bytes.length : i - length;
    parts.push(bytes.subarray(from, i), REPLACEMENT);
    size += i - from;
    replaced.push({ at: size, original: hexBytes(bytes.subarray(i, end)) });
    size += REPLACEMENT.length;
    from = i = end;
  }
  parts.push(bytes.subarray(from));
  return { bytes: Buffer.concat(parts), replaced };
}

/** `0xE2 0x82`: the bytes as a user's hex editor shows them. */
function hexBytes(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(' ');
}

/** Length of `bytes` without a multi-byte sequence cut at its end. */
function completeUtf8Length(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = n - 1;
  // Walk back over at most 3 continuation bytes to the lead byte of the last sequence.
  while (i >= 0 && i > n - 4 && (bytes[i]! & 0xc0) === 0x80) i--;
  if (i < 0) return n;
  const lead = bytes[i]!;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return n - i < size ? i : n;
}

/** Any other encoding: decoded strictly, then written as UTF-8. */
function reencoder(encoding: string): ChunkDecoder {
  const decoder = createDecoder(encoding);
  return (chunk, last) => {
    try {
      return { bytes: Buffer.from(decoder.decode(chunk, last), 'utf8') };
    } catch {
      // Rare (an unpaired UTF-16 surrogate, a cut final character): named at the chunk's line.
      return {
        bytes: Buffer.alloc(0),
        fault: `the bytes are not valid ${encoding} (pass --encoding if the file uses another one)`,
      };
    }
  };
}
