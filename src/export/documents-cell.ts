/**
 * The CSV `documents` cell written straight into bytes, for the documents nearly every client
 * has: values with nothing to escape. It is the bytes the string path writes (JSON.stringify,
 * formula escape, quotes doubled), without the three strings it makes on the way: 2.5 KB of
 * garbage a client, the largest share of the export's allocations (and of its scavenges).
 */
import type { ExportDocument } from './columns.js';

/** Bytes writeDocuments may take, at most. */
export function documentsBytes(documents: readonly ExportDocument[]): number {
  let bytes = 4;
  for (const doc of documents) {
    // Keys, braces and comma: 45; four values' quotes (or null): 16.
    bytes += 61 + 3 * ((doc.name?.length ?? 0) + (doc.key?.length ?? 0) + (doc.status?.length ?? 0) + (doc.reason?.length ?? 0));
  }
  return bytes;
}

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (char) => char.charCodeAt(0));
const NAME = ascii('{""name"":');
const KEY = ascii(',""key"":');
const STATUS = ascii(',""status"":');
const REASON = ascii(',""reason"":');
const NULL = ascii('null');
const EMPTY = ascii('[]');

/** What writeDocuments returns where a value is not plain: the string path writes that cell. */
export const NOT_PLAIN = -1;

/**
 * Documents as the CSV cell, at `at` (room: documentsBytes); returns the end, or NOT_PLAIN
 * (bytes written past `at` are then to be dropped) where a value holds what the string path
 * changes (value below). The keys in flattenClient's order, as JSON.stringify writes its
 * objects; `[]` unquoted, as a cell with nothing to quote.
 */
export function writeDocuments(out: Uint8Array, at: number, documents: readonly ExportDocument[]): number {
  if (documents.length === 0) return put(out, at, EMPTY);
  out[at++] = 34;
  out[at++] = 91;
  for (let i = 0; i < documents.length; i++) {
    const doc = documents[i]!;
    if (i > 0) out[at++] = 44;
    at = value(out, put(out, at, NAME), doc.name);
    if (at !== NOT_PLAIN) at = value(out, put(out, at, KEY), doc.key);
    if (at !== NOT_PLAIN) at = value(out, put(out, at, STATUS), doc.status);
    if (at !== NOT_PLAIN) at = value(out, put(out, at, REASON), doc.reason);
    if (at === NOT_PLAIN) return NOT_PLAIN;
    out[at++] = 125;
  }
  out[at++] = 93;
  out[at++] = 34;
  return at;
}

function put(out: Uint8Array, at: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) out[at + i] = bytes[i]!;
  return at + bytes.length;
}

/**
 * `null`, or the value in doubled quotes as UTF-8; NOT_PLAIN where it holds what JSON.stringify
 * escapes (quote, backslash, control characters, surrogates) or what the formula escape changes:
 * a `,` or `;` before a trigger, apostrophes between. (The cell's start is the list's `[`; past
 * a value come its closing quote and `,` or `}`, and every `,` of the list itself is followed by
 * a quote or `{`: no trigger.)
 */
function value(out: Uint8Array, at: number, text: string | null): number {
  if (text === null) return put(out, at, NULL);
  if (typeof text !== 'string') return NOT_PLAIN;
  out[at++] = 34;
  out[at++] = 34;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      if (unit < 32 || unit === 34 || unit === 92 || ((unit === 44 || unit === 59) && triggerAt(text, i + 1))) return NOT_PLAIN;
      out[at++] = unit;
    } else if (unit < 0x800) {
      out[at++] = 0xc0 | (unit >> 6);
      out[at++] = 0x80 | (unit & 63);
    } else {
      if (unit >= 0xd800 && unit <= 0xdfff) return NOT_PLAIN;
      out[at++] = 0xe0 | (unit >> 12);
      out[at++] = 0x80 | ((unit >> 6) & 63);
      out[at++] = 0x80 | (unit & 63);
    }
  }
  out[at++] = 34;
  out[at++] = 34;
  return at;
}

/** Whether a formula trigger (= + - @) comes at `i`, after any apostrophes. */
function triggerAt(text: string, i: number): boolean {
  while (text.charCodeAt(i) === 39) i++;
  const unit = text.charCodeAt(i);
  return unit === 61 || unit === 43 || unit === 45 || unit === 64;
}
