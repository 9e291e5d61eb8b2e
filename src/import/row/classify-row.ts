/**
 * What happens to one row, decided before anything is sent: map and validate its values, key
 * it, drop it as a duplicate (its key, or its person, an earlier row's), skip it (created by an
 * earlier run), match it to a client the service already holds, or send it (valid, in a dry
 * run). No I/O: the run's key and person sets are the only state it touches.
 */
import { keyOf } from './key.js';
import type { KeySet } from './key-set.js';
import type { InvalidCell } from '../read/index.js';
import type { Person, PersonOf, PersonSet } from './identity.js';
import type { ClientFields, RowValidator } from './validate-row.js';

/** A client the service holds for a person, as the held e-mails know it. */
export type Held =
  /** One client: `own` when an earlier run of this results file created it. */
  | { kind: 'one'; id: string; own: boolean }
  /** Several clients share the person: reported, never guessed at. */
  | { kind: 'several'; ids: readonly string[] };

/** What the service holds, by person (the send stage lists it before the first row). */
export interface HeldLookup {
  get(person: Person): Held | undefined;
}

export type RowVerdict =
  | { kind: 'invalid'; issues: string; list: readonly string[] }
  | { kind: 'duplicate'; key: string; firstRow: number; person?: { label: string; differs: string | undefined } }
  | { kind: 'skipped'; key: string }
  | { kind: 'existing'; key: string; held: Held; fields?: ClientFields }
  | { kind: 'valid'; key: string }
  | { kind: 'send'; key: string; fields: ClientFields };

export interface ClassifyRules {
  /** Maps the values to fields and checks them (rowValidator); invalid bytes make the row invalid. */
  validate: RowValidator;
  /** Keys of this run so far, each with the row that had it first; a new key is added. */
  seen: KeySet;
  /** Keys already `created` in the results file being resumed. */
  created: KeySet;
  dryRun: boolean;
  /**
   * Who a row's person is (`label`: what the messages call it, `e-mail` or the column's name)
   * and the people of this run so far, each with the row that had them first; undefined with
   * `--identity none`.
   */
  people?: { of: PersonOf; set: PersonSet; label: string } | undefined;
  /** The clients the service held before the run, by person (undefined: not asked). */
  held?: HeldLookup | undefined;
}

export function classifyRow(
  values: readonly string[],
  row: number,
  rules: ClassifyRules,
  invalidBytes?: readonly InvalidCell[],
): RowVerdict {
  const check = rules.validate(values, invalidBytes);
  if (!check.ok) return { kind: 'invalid', issues: check.issues.join('; '), list: check.issues };
  const print = keyOf(check.value);
  const firstRow = rules.seen.add(print, row);
  if (firstRow !== undefined) return { kind: 'duplicate', key: print.key, firstRow };
  const { people } = rules;
  const person = people?.of(values, check.value);
  if (person !== undefined && people) {
    const first = people.set.add(person, row, check.value);
    if (first !== undefined) {
      const differs = people.set.differences(first, check.value);
      return { kind: 'duplicate', key: print.key, firstRow: first, person: { label: people.label, differs } };
    }
  }
  if (rules.created.size > 0 && rules.created.has(print)) return { kind: 'skipped', key: print.key };
  const held = person === undefined ? undefined : rules.held?.get(person);
  if (held !== undefined) return { kind: 'existing', key: print.key, held, fields: check.value };
  if (rules.dryRun) return { kind: 'valid', key: print.key };
  return { kind: 'send', key: print.key, fields: check.value };
}
