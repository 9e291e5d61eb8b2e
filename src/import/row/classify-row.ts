/**
 * What happens to one row, decided before anything is sent: map and validate its values, key
 * it, drop it as a duplicate, skip it (created by an earlier run), or send it (valid, in a
 * dry run). No I/O: the run's key set is the only state it touches.
 */
import { keyOf } from './key.js';
import type { KeySet } from './key-set.js';
import type { InvalidCell } from '../read/index.js';
import type { ClientFields, RowValidator } from './validate-row.js';

export type RowVerdict =
  | { kind: 'invalid'; issues: string; list: readonly string[] }
  | { kind: 'duplicate'; key: string; firstRow: number }
  | { kind: 'skipped'; key: string }
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
  if (rules.created.size > 0 && rules.created.has(print)) return { kind: 'skipped', key: print.key };
  if (rules.dryRun) return { kind: 'valid', key: print.key };
  return { kind: 'send', key: print.key, fields: check.value };
}
