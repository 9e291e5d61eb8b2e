/**
 * The service's clients as prints, not objects, so a million of them hold tens of MB:
 *
 * - every client a results line names (a claim) gets a slot, before the listing: its id's
 *   64-bit print → the slot; the listing then fills the slot with prints of the compared fields
 *   (a SHA-256 print of name, e-mail, country and address together, a print of the currency,
 *   and a 32-bit print of each of the four, to name the field that differs);
 * - every person (the e-mail, as identity.ts compares it) gets a 64-bit print in a set, and
 *   the few persons held by several clients a count and the ids that came after the first.
 *
 * Ids are service-made: a quick print. Two ids sharing one (~n²/2⁶⁵: 2.7·10⁻⁸ for a million)
 * would make an unclaimed client look claimed; the fields' prints are SHA-256.
 */
import { fingerprint, type Print, PrintTable, quickPrint } from '../infra/fingerprints.js';
import { fold } from '../import/row/key.js';
import { emailIdentity, personPrint } from '../import/row/identity.js';
import type { Client } from '../service/schemas.js';

/** The fields compared, in the order problems name them. */
export const COMPARED = ['name', 'email', 'country', 'address', 'currency'] as const;
export type ComparedField = (typeof COMPARED)[number];

/** The compared fields as normalized text; null where the service sent none. */
export type Compared = Record<ComparedField, string | null>;

/** Ids kept for a person held by several clients (the count is always kept). */
const IDS_KEPT = 5;

/**
 * A field as both sides are compared: text folded as the idempotency key folds it (NFC, runs
 * of white space as one, trimmed), the e-mail as identity compares it, codes in capitals.
 */
export function normalizeField(field: ComparedField, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (field === 'email') return emailIdentity(value);
  if (field === 'country' || field === 'currency') return value.trim().toUpperCase();
  return fold(value.trim());
}

export function comparedOf(values: Partial<Record<ComparedField, string | null | undefined>>): Compared {
  return Object.fromEntries(COMPARED.map((field) => [field, normalizeField(field, values[field])])) as Compared;
}

/** The four fields every row has, as one SHA-256 print (JSON: no two texts share an encoding). */
function corePrint(fields: Compared): Print {
  return fingerprint(JSON.stringify([fields.name, fields.email, fields.country, fields.address]));
}

/** null is not any text: it gets a print no string of printable text has. */
const NULL_TEXT = '\u0000null';
const hint = (value: string | null) => quickPrint(value ?? NULL_TEXT).lo;

/** `differs` with no field: the prints differ, the field's own 32-bit prints do not say which. */
export type Verdict = { kind: 'not_listed' } | { kind: 'equal' } | { kind: 'differs'; fields: ComparedField[] };

export class ServicePrints {
  /** Claimed id's print → its slot. */
  readonly #claims = new PrintTable({ values: true });
  #slots = 0;
  #listed = new Uint8Array(0);
  /** Per slot: core print (hi, lo), currency print (hi, lo), four field hints. */
  #prints = new Uint32Array(0);
  readonly #people = new PrintTable();
  readonly #several = new Map<string, { count: number; ids: string[] }>();
  /** Clients listed; of them, claimed. */
  listed = 0;
  claimedListed = 0;

  /** A results line names this client (before the listing). */
  claim(id: string): void {
    if (this.#claims.add(quickPrint(id), this.#slots) === undefined) this.#slots++;
  }

  get claims(): number {
    return this.#slots;
  }

  /** Sizes the slots once every claim is in. */
  seal(): void {
    this.#listed = new Uint8Array(this.#slots);
    this.#prints = new Uint32Array(this.#slots * 8);
  }

  /** A listed client: counted by person; its fields printed when claimed. Returns whether it is claimed. */
  list(client: Client, byEmail: boolean): boolean {
    this.listed++;
    if (byEmail && client.email) this.#countPerson(personPrint(emailIdentity(client.email)), client.id);
    const slot = this.#claims.get(quickPrint(client.id));
    if (slot === undefined) return false;
    this.claimedListed++;
    this.#listed[slot] = 1;
    const fields = comparedOf(client);
    const core = corePrint(fields);
    const currency = quickPrint(fields.currency ?? NULL_TEXT);
    const at = slot * 8;
    this.#prints.set([core.hi, core.lo, currency.hi, currency.lo, hint(fields.name), hint(fields.email), hint(fields.country), hint(fields.address)], at);
    return true;
  }

  #countPerson(person: Print, id: string): void {
    if (this.#people.add(person) === undefined) return;
    const key = `${person.hi}:${person.lo}`;
    const known = this.#several.get(key) ?? { count: 1, ids: [] };
    known.count++;
    if (known.ids.length < IDS_KEPT) known.ids.push(id);
    this.#several.set(key, known);
  }

  /** The listed clients with this e-mail (at least 1 is assumed: the row's own): their count, and the ids of those after the first. */
  clientsOf(email: string): { count: number; ids: string[] } {
    // Nobody held twice (a complete migration): no row needs its person printed to know it.
    if (this.#several.size === 0) return { count: 1, ids: [] };
    const person = personPrint(emailIdentity(email));
    if (!this.#people.has(person)) return { count: 0, ids: [] };
    return this.#several.get(`${person.hi}:${person.lo}`) ?? { count: 1, ids: [] };
  }

  /** A claimed client the listing had. */
  isListed(id: string): boolean {
    const slot = this.#claims.get(quickPrint(id));
    return slot !== undefined && this.#listed[slot] === 1;
  }

  /** The row's fields against the listed client's; a row without a currency leaves the service's unchecked. */
  compare(id: string, row: Compared): Verdict {
    const slot = this.#claims.get(quickPrint(id));
    if (slot === undefined || this.#listed[slot] !== 1) return { kind: 'not_listed' };
    const at = slot * 8;
    const p = this.#prints;
    const core = corePrint(row);
    const coreEqual = p[at] === core.hi && p[at + 1] === core.lo;
    const currency = row.currency === null ? undefined : quickPrint(row.currency);
    const currencyEqual = currency === undefined || (p[at + 2] === currency.hi && p[at + 3] === currency.lo);
    if (coreEqual && currencyEqual) return { kind: 'equal' };
    const fields: ComparedField[] = [];
    if (!coreEqual) {
      (['name', 'email', 'country', 'address'] as const).forEach((field, i) => {
        if (p[at + 4 + i] !== hint(row[field])) fields.push(field);
      });
      // Equal 32-bit hints over different prints (one in 2³²): `fields` stays empty, the field unnamed.
    }
    if (!currencyEqual) fields.push('currency');
    return { kind: 'differs', fields };
  }

  /** Bytes held by the prints, for the evidence's account of memory. */
  get bytes(): number {
    return this.#listed.byteLength + this.#prints.byteLength + this.#claims.bytes + this.#people.bytes;
  }
}
