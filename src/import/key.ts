import { createHash } from 'node:crypto';
import type { CreateClientBody } from '../service/schemas.js';
import type { ClientFields } from './validate-row.js';

/**
 * The idempotency key of a row without its own: a hash of the normalized request content,
 * so it is the same across runs, row order and re-saves of the file. Text is NFC-normalized
 * with runs of white space folded and the e-mail lower-cased, so cosmetic edits do not make
 * a second client. The version prefix lets the derivation change without colliding.
 */
export function deriveKey(fields: ClientFields): string {
  const fold = (text: string | undefined) => (text ?? '').normalize('NFC').replace(/\s+/gu, ' ');
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
  return `ccsb_${createHash('sha256').update(canonical).digest('hex').slice(0, 40)}`;
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
