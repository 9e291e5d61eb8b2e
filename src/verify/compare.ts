/**
 * Each source row beside its results lines and the service's prints. A row is proven when
 * either
 *   (a) its lines name one client (created, or skipped as changed since created), that client
 *       is listed, no other client holds the row's person, and every compared field equals
 *       the row's normalized value; or
 *   (b) its line accounts for it without a client of its own: existing (matched, with its id or
 *       why not), invalid, failed or duplicate with the reason the results file gives.
 * Anything else is a problem of one kind (problems.ts). Lines for rows the source does not
 * have are strays: one that names a client makes that client unexplained.
 */
import type { RawRecord } from '../import/read/index.js';
import type { ClientFields } from '../import/row/validate-row.js';
import type { CreatedHashes } from '../import/record/trail.js';
import type { Client } from '../service/schemas.js';
import { type Problem, type ProblemLog } from './problems.js';
import type { OpenedSource } from './read-source.js';
import type { ResultLine, RowLines } from './results-files.js';
import { type Compared, comparedOf, type ComparedField, normalizeField, type ServicePrints } from './service-prints.js';

/** Outcomes that account for a row without a client of its own, when the line says why. */
export const ACCOUNTED = ['existing', 'invalid', 'failed', 'duplicate'] as const;
type Accounted = (typeof ACCOUNTED)[number];

export interface CompareContext {
  prints: ServicePrints;
  problems: ProblemLog;
  /** Persons are e-mails (identity email): a second client with the row's e-mail is a problem. */
  byEmail: boolean;
  /** How the listing was bounded, for the message of a client not listed. */
  listedAs: string;
  /** The client's detail, for the values of a changed row (bounded by the caller). */
  detail: (id: string) => Promise<Client | undefined>;
  /**
   * The body a row makes now, hashed as the import hashed what it sent (trail.ts), and each results
   * file's trail of those hashes: a field the service does not return is checked this way.
   */
  bodyHashOf?: ((fields: ClientFields, key: string) => string) | undefined;
  trails?: ReadonlyMap<string, CreatedHashes> | undefined;
  /** Rows whose body hash was compared, and those whose trail had none (an import before trails). */
  bodies?: { checked: number; unrecorded: number } | undefined;
  signal?: AbortSignal | undefined;
  onRow?: (() => void) | undefined;
}

/** One source's account. */
export interface SourceTally {
  /** Data rows in the source. */
  rows: number;
  /** On the service once, every compared field equal. */
  proven: number;
  /** Rows not on the service for a recorded reason: existing, invalid, failed, duplicate. */
  accounted: Record<Accounted, number>;
  /** Results lines for rows the source does not have. */
  strayLines: number;
  /** Rows with at least one problem. */
  rowsWithProblems: number;
}

export async function compareSource(source: string, opened: OpenedSource, lines: RowLines, context: CompareContext): Promise<SourceTally> {
  const tally: SourceTally = {
    rows: 0,
    proven: 0,
    accounted: { existing: 0, invalid: 0, failed: 0, duplicate: 0 },
    strayLines: 0,
    rowsWithProblems: 0,
  };
  const stray = (line: ResultLine) => {
    tally.strayLines++;
    if (line.clientId !== undefined && ['created', 'existing', 'skipped'].includes(line.outcome)) {
      context.problems.add({
        kind: 'unexplained',
        source,
        results_file: line.file,
        client_id: line.clientId,
        message: `client ${line.clientId} is named by ${line.file} for row ${line.row} (${line.outcome}), but ${source} has no row ${line.row}: the source changed since the import, or the results file is another file's`,
      });
    }
  };
  for await (const raw of opened.rows()) {
    if (context.signal?.aborted) return tally;
    tally.rows++;
    const before = context.problems.total;
    const verdict = await judgeRow(source, raw, await lines.take(raw.row, stray), opened, context);
    if (verdict === 'proven') tally.proven++;
    else if (verdict !== 'problem') tally.accounted[verdict]++;
    if (context.problems.total > before) tally.rowsWithProblems++;
    context.onRow?.();
  }
  await lines.rest(stray);
  return tally;
}

type RowVerdict = 'proven' | Accounted | 'problem';

async function judgeRow(source: string, raw: RawRecord, lines: ResultLine[], opened: OpenedSource, context: CompareContext): Promise<RowVerdict> {
  const at = { source, row: raw.row, line: raw.line };
  const claiming = lines.filter((line) => line.clientId !== undefined && (line.outcome === 'created' || line.outcome === 'skipped'));
  if (claiming.length > 0) return onService(at, raw, claiming, opened, context);
  if (lines.length === 0) {
    context.problems.add({ kind: 'missing', ...at, message: 'no results file has a line for this row: it was never imported' });
    return 'problem';
  }
  const accounted = lines.find((line) => reasonOf(line) !== undefined);
  if (accounted !== undefined) return accounted.outcome as Accounted;
  const line = lines[0]!;
  context.problems.add({ kind: 'missing', ...at, results_file: line.file, message: whyMissing(line) });
  return 'problem';
}

/** The reason a line accounts for its row, or undefined when it does not. */
function reasonOf(line: ResultLine): string | undefined {
  if (!(ACCOUNTED as readonly string[]).includes(line.outcome)) return undefined;
  if (line.outcome === 'existing' && line.clientId !== undefined) return `existing client ${line.clientId}`;
  const reason = line.errorMessage || line.errorCode;
  return reason === '' ? undefined : reason;
}

function whyMissing(line: ResultLine): string {
  switch (line.outcome) {
    case 'not_attempted':
      return `${line.file} says not_attempted: the run stopped before sending this row (resume the import)`;
    case 'valid':
      return `${line.file} says valid: it was written by validate, which sends nothing`;
    case 'created':
      return `${line.file} says created but names no client`;
    default:
      return (ACCOUNTED as readonly string[]).includes(line.outcome)
        ? `${line.file} says ${line.outcome} but gives no reason`
        : `${line.file} says ${JSON.stringify(line.outcome)}, which is no outcome of an import`;
  }
}

type Place = Pick<Problem, 'source' | 'row' | 'line'>;

/** (a): the row's client(s) on the service, once, with the row's values. */
async function onService(at: Place, raw: RawRecord, claiming: ResultLine[], opened: OpenedSource, context: CompareContext): Promise<RowVerdict> {
  const before = context.problems.total;
  const ids = [...new Set(claiming.map((line) => line.clientId!))];
  const check = opened.validate(raw.values, raw.invalidBytes);
  if (ids.length > 1) {
    context.problems.add({
      kind: 'twice',
      ...at,
      client_id: ids[0]!,
      other_client_ids: ids.slice(1),
      message: `the results name ${ids.length} clients for this row (${ids.join(', ')}): it was created more than once`,
    });
  } else if (context.byEmail && check.ok) {
    twiceByPerson(at, ids[0]!, check.value, context);
  }
  for (const id of ids) {
    const file = claiming.find((line) => line.clientId === id)!.file;
    if (context.prints.isListed(id)) {
      if (!check.ok) {
        context.problems.add({
          kind: 'changed',
          ...at,
          client_id: id,
          field: 'row',
          message: `the row does not pass the import's checks now (${check.issues.join('; ')}), so client ${id} cannot be compared with it: were other reading flags used for the import?`,
        });
      } else {
        await compareFields(at, id, comparedOf(check.value), context);
        const line = claiming.find((l) => l.clientId === id && l.outcome === 'created');
        if (line !== undefined) compareBody(at, id, line, check.value, context);
      }
    } else {
      context.problems.add({ kind: 'missing', ...at, results_file: file, client_id: id, message: `${file} says client ${id} was made from this row, but the service has no such client ${context.listedAs}` });
    }
  }
  return context.problems.total > before ? 'problem' : 'proven';
}

/**
 * The body this row makes now against the hash of the body sent for it: equal, or the row (or a
 * reading or import flag) changed since — the application date and the liquidity type are not
 * returned by the service, so this is where a change in them shows.
 */
function compareBody(at: Place, id: string, line: ResultLine, fields: ClientFields, context: CompareContext): void {
  const trail = context.trails?.get(line.file);
  if (trail === undefined || context.bodyHashOf === undefined || line.key === undefined || context.bodies === undefined) return;
  const verdict = trail.check(line.row, context.bodyHashOf(fields, line.key));
  if (verdict === 'none') {
    context.bodies.unrecorded++;
    return;
  }
  context.bodies.checked++;
  if (verdict === 'same') return;
  context.problems.add({
    kind: 'changed',
    ...at,
    client_id: id,
    field: 'body',
    message:
      `the body this row makes now differs from the one sent for client ${id} (SHA-256 in ${line.file}.trail.csv): ` +
      'a field the service does not return (application date, liquidity type) or the row changed since, or the import used another --liquidity-type or --application-date-field',
  });
}

/** The service holds the row's person (its e-mail) as more than one client. */
function twiceByPerson(at: Place, id: string, fields: ClientFields, context: CompareContext): void {
  const held = context.prints.clientsOf(fields.email);
  if (held.count < 2) return;
  const others = held.ids.filter((other) => other !== id);
  const named = others.length > 0 ? `: ${id} of the results, and ${others.join(', ')}${held.count - 1 > others.length ? ' and more' : ''}` : '';
  context.problems.add({
    kind: 'twice',
    ...at,
    client_id: id,
    ...(others.length > 0 && { other_client_ids: others }),
    message: `the service holds ${held.count} clients with this row's e-mail ${normalizeField('email', fields.email)}${named}`,
  });
}

/** One problem per field that differs; the service's values from the client's detail while the caller fetches them. */
async function compareFields(at: Place, id: string, row: Compared, context: CompareContext): Promise<void> {
  const verdict = context.prints.compare(id, row);
  if (verdict.kind !== 'differs') return;
  const detail = await context.detail(id);
  const exact = detail === undefined ? undefined : exactDifferences(comparedOf(detail), row);
  if (exact !== undefined && exact.length > 0) {
    for (const { field, service, value } of exact) {
      context.problems.add({
        kind: 'changed',
        ...at,
        client_id: id,
        field,
        service_value: service,
        source_value: value,
        message: `${field} differs: the service has ${JSON.stringify(service)}, the row ${JSON.stringify(value)} (client ${id})`,
      });
    }
    return;
  }
  if (verdict.fields.length === 0) {
    context.problems.add({ kind: 'changed', ...at, client_id: id, message: `a compared field differs from client ${id}'s (its print differs; which one is not known without the client's detail)` });
  }
  for (const field of verdict.fields) {
    const value = row[field] ?? '';
    context.problems.add({
      kind: 'changed',
      ...at,
      client_id: id,
      field,
      source_value: value,
      message: `${field} differs from client ${id}'s: the row has ${JSON.stringify(value)} (the service's value is shown for the first changed rows only)`,
    });
  }
}

function exactDifferences(service: Compared, row: Compared): { field: ComparedField; service: string | null; value: string }[] {
  return (Object.keys(row) as ComparedField[]).flatMap((field) => {
    const value = row[field];
    // A row without a currency leaves the service's to the service.
    if (value === null || service[field] === value) return [];
    return [{ field, service: service[field], value }];
  });
}
