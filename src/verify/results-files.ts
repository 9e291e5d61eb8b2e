/**
 * The results files, read twice, streamed. First a scan: the header, the clients the lines
 * name (created or matched: the claims the service's listing is checked against), whether the
 * lines are in row order, the file's SHA-256 and its sidecar. Then, once per source, the lines
 * row by row beside the source's rows (RowLines): a file that is not in row order (a run
 * killed before it could sort it) is read from a sorted private copy, never changed itself.
 */
import { copyFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UsageError } from '../errors.js';
import { hashFile } from '../import/record/provenance.js';
import { readMeta, readMetaText } from '../import/record/results-meta.js';
import { isResultsHeader, readResultRecords, RESULT_COLUMNS } from '../import/record/results-read.js';
import { sortResults } from '../import/record/sort-results.js';
import { unescapeFormula } from '../import/row/normalize.js';
import { shownPath } from '../infra/printable.js';
import type { ServicePrints } from './service-prints.js';

/** Outcomes whose line names a client this import made or matched. */
const CLAIMING = new Set(['created', 'existing', 'skipped']);

const column = (name: (typeof RESULT_COLUMNS)[number]) => RESULT_COLUMNS.indexOf(name);
const [ROW, OUTCOME, CLIENT_ID, KEY, ERROR_CODE, ERROR_MESSAGE] = [
  column('row'),
  column('outcome'),
  column('client_id'),
  column('idempotency_key'),
  column('error_code'),
  column('error_message'),
];

/** What the evidence says of one results file. */
export interface ResultsFacts {
  /** The file's path. */
  path: string;
  /** The source file it records. */
  source: string;
  /** Its size, bytes. */
  size: number;
  /** SHA-256 of its bytes (hex). */
  sha256: string | undefined;
  /** Its data lines. */
  lines: number;
  /** The input's columns as the results header repeats them. */
  inputColumns: string[];
  /** The lines were not in row order: read from a sorted copy. */
  sorted: boolean;
  /** The sidecar as written (undefined: none, or not readable as one). */
  meta: unknown;
  /** The ccs-bulk version its sidecar names. */
  writtenBy: string | undefined;
  /** The service the sidecar says the import ran against. */
  service: string | undefined;
  /** The input's SHA-256 as the sidecar recorded it. */
  sourceSha256: string | undefined;
  /** The path RowLines reads: the file itself, or its sorted copy. */
  readPath: string;
}

/** The scan: claims go to `prints`; a file that is not in row order gets a sorted copy in `workdir`. */
export async function scanResults(path: string, source: string, prints: ServicePrints, workdir: string): Promise<ResultsFacts> {
  const sha256 = hashFile(path);
  let header: string[] | undefined;
  let lines = 0;
  let lastRow = 0;
  let ordered = true;
  try {
    for await (const record of readResultRecords(path)) {
      if (header === undefined) {
        if (!isResultsHeader(record)) throw foreign(path);
        header = record;
        continue;
      }
      const row = rowOf(record, path, lines + 2);
      lines++;
      if (row < lastRow) ordered = false;
      lastRow = row;
      const id = clientIdOf(record);
      if (id !== undefined && CLAIMING.has(record[OUTCOME] ?? '')) prints.claim(id);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read results file ${shownPath(path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'results_unreadable');
  }
  if (header === undefined) throw foreign(path);
  const meta = readMeta(path);
  return {
    path,
    source,
    size: statSync(path).size,
    sha256: await sha256,
    lines,
    inputColumns: header.slice(RESULT_COLUMNS.length),
    sorted: !ordered,
    meta: sidecarJson(path),
    writtenBy: meta?.writtenBy,
    service: meta?.service,
    sourceSha256: meta?.source?.sha256,
    readPath: ordered ? path : await sortedCopy(path, workdir),
  };
}

function foreign(path: string): UsageError {
  return new UsageError(`${shownPath(path)} is not a ccs-bulk results file (its header does not start with ${RESULT_COLUMNS.join(',')})`, 'results_foreign');
}

function rowOf(record: readonly string[], path: string, line: number): number {
  const row = Number(record[ROW]);
  if (!Number.isSafeInteger(row) || row < 1) {
    throw new UsageError(`${shownPath(path)} record ${line}: ${JSON.stringify(record[ROW] ?? '')} is not a row number`, 'results_foreign');
  }
  return row;
}

/** The client id a line names (written formula-escaped, like every cell), or undefined. */
function clientIdOf(record: readonly string[]): string | undefined {
  const id = record[CLIENT_ID];
  return id === undefined || id === '' ? undefined : unescapeFormula(id);
}

/** The sidecar's JSON as written, kept whole for the evidence: whatever fields this version wrote. */
function sidecarJson(path: string): unknown {
  const text = readMetaText(path);
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

let copies = 0;

/** A private copy in row order (sort-results.ts's external sort: flat memory). */
async function sortedCopy(path: string, workdir: string): Promise<string> {
  const copy = join(workdir, `${++copies}-${basename(path)}`);
  copyFileSync(path, copy);
  await sortResults(copy);
  return copy;
}

/** One results line, as the comparison needs it. */
export interface ResultLine {
  file: string;
  row: number;
  outcome: string;
  clientId: string | undefined;
  /** The idempotency key it was sent with (the body hash is checked with it). */
  key: string | undefined;
  errorCode: string;
  errorMessage: string;
}

interface Head {
  file: string;
  records: AsyncIterator<string[]>;
  line: ResultLine | undefined;
}

/**
 * The lines of a source's results files, merged by row: `take(row)` hands over the lines of
 * that row, and passes those of lower rows (rows the source does not have) to `stray`.
 */
export class RowLines {
  readonly #heads: Head[];

  private constructor(heads: Head[]) {
    this.#heads = heads;
  }

  static async open(files: readonly ResultsFacts[]): Promise<RowLines> {
    const heads: Head[] = [];
    for (const facts of files) {
      const records = readResultRecords(facts.readPath)[Symbol.asyncIterator]();
      await records.next();
      const head: Head = { file: facts.path, records, line: undefined };
      await advance(head);
      heads.push(head);
    }
    return new RowLines(heads);
  }

  async take(row: number, stray: (line: ResultLine) => void): Promise<ResultLine[]> {
    const lines: ResultLine[] = [];
    for (const head of this.#heads) {
      while (head.line !== undefined && head.line.row <= row) {
        if (head.line.row < row) stray(head.line);
        else lines.push(head.line);
        await advance(head);
      }
    }
    return lines;
  }

  /** The lines past the source's last row. */
  async rest(stray: (line: ResultLine) => void): Promise<void> {
    await this.take(Number.MAX_SAFE_INTEGER, stray);
  }

  async close(): Promise<void> {
    await Promise.all(this.#heads.map((head) => head.records.return?.()));
  }
}

async function advance(head: Head): Promise<void> {
  const step = await head.records.next();
  if (step.done) {
    head.line = undefined;
    return;
  }
  const record = step.value;
  head.line = {
    file: head.file,
    row: Number(record[ROW]),
    outcome: record[OUTCOME] ?? '',
    clientId: clientIdOf(record),
    key: record[KEY] ? unescapeFormula(record[KEY]) : undefined,
    errorCode: record[ERROR_CODE] ?? '',
    errorMessage: record[ERROR_MESSAGE] === undefined ? '' : unescapeFormula(record[ERROR_MESSAGE]),
  };
}
