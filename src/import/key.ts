import { hash } from 'node:crypto';
import type { CreateClientBody } from '../service/schemas.js';
import type { ClientFields } from './validate-row.js';

/**
 * The idempotency key of a row without its own: a hash of the normalized request content,
 * so it is the same across runs, row order and re-saves of the file. Text is NFC-normalized
 * with runs of white space folded and the e-mail lower-cased, so cosmetic edits do not make
 * a second client. The version prefix lets the derivation change without colliding.
 */
/** Plain ASCII with single spaces is already folded: skip the costly Unicode passes for it. */
const FOLDED = /^(?:[\x21-\x7e]| (?! ))*$/;

function fold(text: string | undefined): string {
  if (text === undefined) return '';
  return FOLDED.test(text) ? text : text.normalize('NFC').replace(/\s+/gu, ' ');
}

export function deriveKey(fields: ClientFields): string {
  const canonical = JSON.stringify([
    'ccs-bulk/1',
    fold(fields.name),
    fold(fields.email).toLowerCase(),
    fields.country,
    fold(fields.address),
    fields.currency ?? '',
    fields.application_date ?? '',
    fields.liquidity_type,
  ]);
  return `ccsb_${hash('sha256', canonical, 'hex').slice(0, 40)}`;
}

export function keyOf(fields: ClientFields): string {
  return fields.idempotency_key ?? deriveKey(fields);
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
