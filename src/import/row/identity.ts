/**
 * Who a row's person is. By default their e-mail, normalized: trimmed, compared without regard
 * to case, an internationalized domain in its ASCII form (`jörg@bücher.de` and
 * `JÖRG@xn--bcher-kva.de` are one person). A service where two clients may share an e-mail (one
 * `accounting@` for two companies) names another column (a customer number), or turns the match
 * off. The idempotency key stays the row's content: identity is a second check on top of it.
 *
 * In: a row's checked fields and raw values. Out: the person's identity text and its 64-bit
 * print, and, for rows of one file, the row that first had each person.
 */
import { UsageError } from '../../errors.js';
import { fingerprint, type Print, PrintTable, quickPrint } from '../../infra/fingerprints.js';
import { foldHeader } from '../fields.js';
import { asciiDomain, isAscii } from './email.js';
import { fold } from './key.js';
import type { ClientFields } from './validate-row.js';

/**
 * Who a row's person is, so each person is one client, within the file and on the service: their
 * e-mail (the default), the value of a column you name (a customer number; the service is then
 * not asked), or nobody (rows are matched by their idempotency key alone).
 */
export type Identity =
  | {
      /** A person is their e-mail, trimmed, without regard to case, the domain in ASCII. */
      by: 'email';
    }
  | {
      /** No person match: only the idempotency key keeps a row from being created twice. */
      by: 'none';
    }
  | {
      /** A person is the value of the column named by `column`. */
      by: 'column';
      /** The column's header, as the file has it (matched without regard to case, spaces or accents). */
      column: string;
    };

export const DEFAULT_IDENTITY: Identity = { by: 'email' };

/** `email`, `none` or `column:HEADER`, as the flag and the config file give it. */
export function parseIdentity(text: string): Identity | undefined {
  if (text === 'email' || text === 'none') return { by: text };
  const match = /^column:(.+)$/s.exec(text);
  return match ? { by: 'column', column: match[1]! } : undefined;
}

/** The setting as a flag's value: the inverse of parseIdentity. */
export function identityText(identity: Identity): string {
  return identity.by === 'column' ? `column:${identity.column}` : identity.by;
}

/** The e-mail as identity compares it: trimmed, lower case, the domain in ASCII (punycode). */
export function emailIdentity(email: string): string {
  const trimmed = email.trim();
  if (isAscii(trimmed)) return trimmed.toLowerCase();
  return asciiDomain(trimmed).normalize('NFC').toLowerCase();
}

/** A person: the identity text, as compared. */
export interface Person {
  text: string;
}

/**
 * The print a person is kept by where it persists (the held file) or meets another's prints
 * (the service's people): the first 64 bits of a SHA-256.
 */
export function personPrint(text: string): Print {
  return fingerprint(`ccs-bulk person\u0000${text}`);
}

/** How a row's person is found, settled once from the setting and the file's headers. */
export type PersonOf = (values: readonly string[], fields: ClientFields) => Person | undefined;

export function personFinder(identity: Identity, headers: readonly string[], file: string): PersonOf | undefined {
  if (identity.by === 'none') return undefined;
  if (identity.by === 'email') return (_values, fields) => ({ text: emailIdentity(fields.email) });
  const index = columnIndex(headers, identity.column);
  if (index < 0) {
    throw new UsageError(
      `--identity column:${identity.column}: ${file} has no such column; headers found: ${headers.map((h) => JSON.stringify(h)).join(', ')}`,
      'identity_unknown_column',
    );
  }
  return (values) => {
    const value = fold(values[index]?.trim());
    return value === '' ? undefined : { text: value };
  };
}

function columnIndex(headers: readonly string[], column: string): number {
  const exact = headers.indexOf(column);
  return exact >= 0 ? exact : headers.map(foldHeader).indexOf(foldHeader(column));
}

/** Fields compared when a person's second row is reported, in the order they are named. */
const COMPARED = ['name', 'email', 'country', 'address', 'currency', 'application_date', 'liquidity_type'] as const;

/** First rows whose values are kept for the message (the row number alone is kept for every person). */
const KEPT_ROWS = 20_000;

/**
 * The people of one file, each with the row that first had them: a 64-bit print a person (12
 * bytes a slot, like the key set), and the values of the most recent first rows, to say which
 * fields a later row changes. The print is the fast one (fingerprints.ts quickPrint): it lives
 * for one run, over the user's own file, on every row of a validate, where a SHA-256 a row was a
 * measurable share of the time; a false match would show as a duplicate whose message names no
 * e-mail in common.
 */
export class PersonSet {
  readonly #table = new PrintTable({ values: true });
  /** The most recent first rows' values, in a ring: slot `row % KEPT_ROWS`, its row beside it. */
  readonly #recent: (ClientFields | undefined)[] = new Array(KEPT_ROWS);
  readonly #recentRows = new Int32Array(KEPT_ROWS);

  /** The row that first had this person, or undefined (the person is then added, with this row). */
  add(person: Person, row: number, fields: ClientFields): number | undefined {
    const first = this.#table.add(quickPrint(person.text), row);
    if (first !== undefined) return first;
    this.#recent[row % KEPT_ROWS] = fields;
    this.#recentRows[row % KEPT_ROWS] = row;
    return undefined;
  }

  /** Makes room for `count` people at once (the run sizes it with the key set). */
  reserve(count: number): void {
    this.#table.reserve(count);
  }

  /** `address differs: "Ringstrasse 12a" (row 12) vs "Ringstraße 12"`, or undefined when row `first` is no longer kept. */
  differences(first: number, fields: ClientFields): string | undefined {
    const earlier = this.#recent[first % KEPT_ROWS];
    if (earlier === undefined || this.#recentRows[first % KEPT_ROWS] !== first) return undefined;
    const parts = COMPARED.flatMap((field) => {
      const [a, b] = [earlier[field] ?? '', fields[field] ?? ''];
      return a === b ? [] : [`${field} differs: ${JSON.stringify(a)} (row ${first}) vs ${JSON.stringify(b)}`];
    });
    return parts.length > 0 ? parts.join('; ') : 'no field differs';
  }
}
