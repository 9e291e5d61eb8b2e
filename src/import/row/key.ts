import { hash } from 'node:crypto';
import type { CreateClientBody } from '../../service/schemas.js';
import { type KeyPrint, printOf } from './key-set.js';
import type { ClientFields } from './validate-row.js';

/** Plain ASCII with single spaces is already folded: skip the costly Unicode passes for it. */
const FOLDED = /^(?:[\x21-\x7e]| (?! ))*$/;
/** White space the fold changes: other than a space, or a space after white space. */
const UNFOLDED_SPACE = /[^\S ]|\s /u;

/** NFC, runs of white space as one space. */
export function fold(text: string | undefined): string {
  if (text === undefined) return '';
  if (FOLDED.test(text)) return text;
  const composed = text.normalize('NFC');
  // Most non-ASCII names (Zoë Müller) have single spaces: the replace would copy them unchanged.
  return UNFOLDED_SPACE.test(composed) ? composed.replace(/\s+/gu, ' ') : composed;
}

/**
 * The idempotency key of a row without its own: a hash of the normalized request content,
 * so it is the same across runs, row order and re-saves of the file. Text is NFC-normalized
 * with runs of white space folded and the e-mail lower-cased, so cosmetic edits do not make
 * a second client. The version prefix lets the derivation change without colliding.
 */
export function deriveKey(fields: ClientFields): string {
  return derivedPrint(fields).key;
}

/** What JSON.stringify would escape in a string: quote, backslash, controls, (lone) surrogates. */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The JSON array of the parts, exactly as JSON.stringify writes it; built by joining when no part
 * needs escaping (nearly every row: one regular-expression test for all parts), which is
 * several times faster.
 */
export function canonicalJson(parts: readonly string[]): string {
  if (parts.length === 0) return '[]';
  for (const part of parts) if (JSON_ESCAPED.test(part)) return JSON.stringify(parts);
  return `["${parts.join('","')}"]`;
}

/**
 * Text that fold leaves as it is and JSON writes between quotes as it is: no quote,
 * backslash, control, tab or line break, no run of spaces, no NBSP, and nothing from U+0300
 * up (every character below it is its own NFC, and its only white space is the one space,
 * tab to CR and NBSP). One test, for the names and addresses with accents (Zoë Müller) that
 * would otherwise take the Unicode passes and the escape test. (A loop over the characters
 * measured twice the time: the values arrive as slices of several string shapes. One test
 * over the whole canonical array, built first, measured 2.5 times: it flattens the array and
 * scans it as two-byte text when any part holds a character above U+00FF.)
 */
// eslint-disable-next-line no-misleading-character-class -- a range of code units (U+0300 up), not one character
const PLAIN = /^(?:[^"\\\u0000-\u001f\u00a0\u0300-\uffff ]| (?! ))*$/;
const plain = (text: string) => PLAIN.test(text);

/** The derived key with its fingerprint, both from one digest. */
function derivedPrint(fields: ClientFields): KeyPrint {
  const { name, email, country, address, liquidity_type: liquidity } = fields;
  const currency = fields.currency ?? '';
  const date = fields.application_date ?? '';
  // Nearly every row: the canonical JSON written directly (canonicalJson's result for it).
  const direct =
    plain(name) && plain(email) && plain(country) && plain(address) && plain(currency) && plain(date) && plain(liquidity);
  const canonical = direct
    ? `["ccs-bulk/1","${name}","${email.toLowerCase()}","${country}","${address}","${currency}","${date}","${liquidity}"]`
    : canonicalParts(fields);
  const hex = hash('sha256', canonical, 'hex');
  return {
    key: `ccsb_${hex.slice(0, 40)}`,
    hi: Number.parseInt(hex.slice(0, 8), 16),
    lo: Number.parseInt(hex.slice(8, 16), 16),
  };
}

/** The derivation's content: its version, then the sent fields, folded, as a JSON array. */
function canonicalParts(fields: ClientFields): string {
  return canonicalJson([
    'ccs-bulk/1',
    fold(fields.name),
    fold(fields.email).toLowerCase(),
    fields.country,
    fold(fields.address),
    fields.currency ?? '',
    fields.application_date ?? '',
    fields.liquidity_type,
  ]);
}

/** The row's own key, or the derived one; with its fingerprint for the run's key sets. */
export function keyOf(fields: ClientFields): KeyPrint {
  return fields.idempotency_key === undefined ? derivedPrint(fields) : printOf(fields.idempotency_key);
}

export function toCreateBody(fields: ClientFields, key: string): CreateClientBody {
  const body: CreateClientBody = {
    name: fields.name,
    idempotency_key: key,
    email: fields.email,
    country: fields.country,
    address: fields.address,
    liquidity_type: fields.liquidity_type,
  };
  if (fields.currency !== undefined) body.currency = fields.currency;
  if (fields.application_date !== undefined) body.application_date = fields.application_date;
  return body;
}
