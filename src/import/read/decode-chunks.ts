import { InputError } from '../../errors.js';
import { createDecoder } from './decode-text.js';
import { firstInvalidUtf8 } from './detect-encoding.js';

/** Counts physical lines the way csv-parse does: CRLF, LF and a lone CR each end one. */
export class LineCounter {
  /** The 1-based line the next character is on. */
  line = 1;
  private pendingCr = false;

  /** Line of `text[index]` if `text` were the next text; does not advance. */
  lineAt(text: string, index: number): number {
    return this.line + countBreaks(text, 0, index, this.pendingCr).breaks;
  }

  advance(text: string): void {
    const { breaks, endsWithCr } = countBreaks(text, 0, text.length, this.pendingCr);
    this.line += breaks;
    this.pendingCr = endsWithCr;
  }
}

/** Line breaks in `text`, CRLF counting as one. */
export function lineBreaks(text: string): number {
  return text.includes('\n') || text.includes('\r') ? countBreaks(text, 0, text.length, false).breaks : 0;
}

function countBreaks(
  text: string,
  from: number,
  to: number,
  pendingCr: boolean,
): { breaks: number; endsWithCr: boolean } {
  let breaks = 0;
  let previousCr = pendingCr;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) breaks++;
    else if (c === 10 && !previousCr) breaks++;
    previousCr = c === 13;
  }
  return { breaks, endsWithCr: previousCr };
}

/**
 * Decodes a byte stream chunk by chunk (never the whole file) and refuses what a CSV cannot
 * hold: bytes that are not valid in the encoding and NUL characters. On such a fault the
 * text before it is yielded first, so the records before the broken line still reach the
 * importer, then an InputError names the line.
 */
export async function* decodeChunks(
  chunks: AsyncIterable<Uint8Array>,
  encoding: string,
  file: string,
  startLine = 1,
): AsyncGenerator<string> {
  const lines = new LineCounter();
  lines.line = startLine;
  const decode = encoding === 'utf-8' ? utf8Decoder() : genericDecoder(encoding);
  let last = false;
  const iterator = chunks[Symbol.asyncIterator]();
  while (!last) {
    const next = await iterator.next();
    last = next.done === true;
    const { text, fault } = decode(next.done ? new Uint8Array(0) : next.value, last);
    const nul = text.indexOf('\0');
    const clean = nul === -1 ? text : text.slice(0, nul);
    if (clean.length > 0) yield clean;
    if (nul !== -1) {
      const line = lines.lineAt(text, nul);
      throw new InputError(
        `${file}: contains NUL bytes (line ${line}): is this really a CSV file?`,
        'input_binary',
        { file, line },
      );
    }
    if (fault) {
      const line = lines.lineAt(text, text.length);
      throw new InputError(`${file}: line ${line}: ${fault}`, 'input_encoding', { file, line });
    }
    lines.advance(text);
  }
}

type ChunkDecoder = (bytes: Uint8Array, last: boolean) => { text: string; fault?: string };

/**
 * UTF-8 keeps its own carry of an incomplete trailing sequence, so that on a bad byte it can
 * decode exactly the valid text before it and say where the file stopped being UTF-8.
 */
function utf8Decoder(): ChunkDecoder {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let carry = new Uint8Array(0);
  return (chunk, last) => {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const cut = last ? bytes.length : completeUtf8Length(bytes);
    carry = bytes.slice(cut);
    const whole = bytes.subarray(0, cut);
    try {
      return { text: decoder.decode(whole) };
    } catch {
      const at = Math.max(0, firstInvalidUtf8(whole, false));
      const byte = whole[at] ?? 0;
      return {
        text: decoder.decode(whole.subarray(0, at)),
        fault:
          `byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} is not valid UTF-8 although the start of ` +
          'the file is: if the file comes from Excel on Windows, pass --encoding windows-1252',
      };
    }
  };
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

function genericDecoder(encoding: string): ChunkDecoder {
  const decoder = createDecoder(encoding);
  return (chunk, last) => {
    try {
      return { text: decoder.decode(chunk, last) };
    } catch {
      // Rare (an unpaired UTF-16 surrogate, a cut final character): named at the chunk's line.
      return {
        text: '',
        fault: `the bytes are not valid ${encoding} (pass --encoding if the file uses another one)`,
      };
    }
  };
}
