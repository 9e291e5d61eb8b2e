/**
 * The CSV `documents` cell written straight into bytes, for the documents nearly every client
 * has: values with nothing to escape. It is the bytes the string path writes (JSON.stringify,
 * formula escape, quotes doubled), without the three strings it makes on the way: 2.5 KB of
 * garbage a client, the largest share of the export's allocations (and of its scavenges).
 */
import type { ExportDocument } from './columns.js';

/**
 * What JSON.stringify escapes (quote, backslash, control characters, surrogates), what the
 * formula escape looks at after a separator (`,` `;`), and the CSV quote: a value holding none
 * is written as it is.
 */
const NOT_PLAIN = /[",;\\\u0000-\u001f\ud800-\udfff]/;

/** Whether writeDocuments writes these documents (else: the string path). */
export function plainDocuments(documents: readonly ExportDocument[]): boolean {
  for (const doc of documents) {
    if (!plainValue(doc.name) || !plainValue(doc.key) || !plainValue(doc.status) || !plainValue(doc.reason)) return false;
  }
  return true;
}

function plainValue(value: string | null): boolean {
  return value === null || (typeof value === 'string' && !NOT_PLAIN.test(value));
}

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

/**
 * Plain documents (plainDocuments) as the CSV cell, at `at` (room: documentsBytes); returns the
 * end. The keys in flattenClient's order, as JSON.stringify writes its objects; `[]` unquoted,
 * as a cell with nothing to quote.
 */
export function writeDocuments(out: Uint8Array, at: number, documents: readonly ExportDocument[]): number {
  if (documents.length === 0) return put(out, at, EMPTY);
  out[at++] = 34;
  out[at++] = 91;
  for (let i = 0; i < documents.length; i++) {
    const doc = documents[i]!;
    if (i > 0) out[at++] = 44;
    at = value(out, put(out, at, NAME), doc.name);
    at = value(out, put(out, at, KEY), doc.key);
    at = value(out, put(out, at, STATUS), doc.status);
    at = value(out, put(out, at, REASON), doc.reason);
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

/** `null`, or the value in doubled quotes as UTF-8 (plain: no surrogates, nothing to escape). */
function value(out: Uint8Array, at: number, text: string | null): number {
  if (text === null) return put(out, at, NULL);
  out[at++] = 34;
  out[at++] = 34;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) out[at++] = unit;
    else if (unit < 0x800) {
      out[at++] = 0xc0 | (unit >> 6);
      out[at++] = 0x80 | (unit & 63);
    } else {
      out[at++] = 0xe0 | (unit >> 12);
      out[at++] = 0x80 | ((unit >> 6) & 63);
      out[at++] = 0x80 | (unit & 63);
    }
  }
  out[at++] = 34;
  out[at++] = 34;
  return at;
}
