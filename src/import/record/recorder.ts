/**
 * Every row's outcome goes through the recorder: the results file, the --failed file, the
 * counts and top error codes, --max-errors, and why the run stopped, if it did.
 */
import type { ErrorCode } from '../../errors.js';
import type { RowVerdict } from '../row/classify-row.js';
import type { FailedFile } from './failed.js';
import type { RawRecord } from '../read/index.js';
import { OUTCOMES, type Outcome, type ResultLine, type ResultsFile } from './results.js';

export type StopReason =
  | 'auth'
  | 'interrupted'
  | 'max_errors'
  | 'input_error'
  | 'output_error'
  | 'connection'
  | 'outage'
  | 'incomplete_run'
  | 'systemic_response';

/** Why a run stopped before the end, and what to do about it. */
export interface Stop {
  /** What stopped it: `auth`, `interrupted` (aborted), `max_errors`, `outage`, `connection`… */
  reason: StopReason;
  /** What happened and what to do, as the rejected error's message says it. */
  message: string;
  /** The code of the error the run rejects with (`'auth'`, `'max_errors'`, `'outage'`…). */
  code: ErrorCode;
  /** One line each for the summary, when the message is longer than that. */
  cause?: string | undefined;
  /** What to change before running again, in one sentence (with `cause`). */
  fix?: string | undefined;
}

export interface RecorderOptions {
  results: ResultsFile;
  failed: FailedFile | undefined;
  maxErrors: number | undefined;
  /** Ctrl-C: nothing more goes on the wire. */
  signal: AbortSignal | undefined;
  /** After each outcome (progress). */
  onRecord: () => void;
  /** A row the service refused (the review page groups them). */
  onFailed?: ((line: ResultLine) => void) | undefined;
  /** How messages name a row's place: its `line` (CSV) or `row` (a worksheet's). */
  where?: 'line' | 'row' | undefined;
  /** Every row's outcome as it is recorded, a `skipped` row's too (it gets no new results line). */
  onLine?: ((line: ResultLine) => void) | undefined;
}

export class Recorder {
  readonly counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  /** `created` rows whose client the service held before this run began (existing.ts): a replay, not a new client. */
  replayed = 0;
  /** Rows whose person the service holds as several clients (each is `existing`, without an id). */
  heldTwice = 0;
  /** Rows (--resume) changed since an earlier run of the results file created their client. */
  readonly changedRows: number[] = [];
  /** The first stop wins. */
  stopped: Stop | undefined;
  /** A results or failed file that could not be written: thrown once in-flight rows finish. */
  outputFailure: unknown;
  readonly #options: RecorderOptions;
  readonly #errorCodes = new Map<string, number>();
  #errors = 0;

  constructor(options: RecorderOptions) {
    this.#options = options;
  }

  /** One outcome: a results line, and for a problem (`error`) a --failed line too. */
  record(line: ResultLine, error?: string): void {
    this.counts[line.outcome]++;
    this.#options.results.write(line);
    this.#options.onLine?.(line);
    if (error !== undefined) {
      const failed = line.outcome === 'failed';
      if (failed) this.#options.onFailed?.(line);
      const place = line.line === undefined ? undefined : { row: line.row, line: line.line };
      this.#options.failed?.write(line.values, error, failed ? line.key : undefined, failed ? line.errorParam : undefined, place);
      const code = line.errorCode ?? line.outcome;
      this.#errorCodes.set(code, (this.#errorCodes.get(code) ?? 0) + 1);
      const { maxErrors } = this.#options;
      if (maxErrors !== undefined && ++this.#errors >= maxErrors) {
        this.stop('max_errors', `stopped after ${this.#errors} errors (--max-errors ${maxErrors})`, 'max_errors');
      }
    }
    this.#options.onRecord();
  }

  /** A row decided without sending (classifyRow). */
  settle(raw: RawRecord, verdict: Exclude<RowVerdict, { kind: 'send' }>): void {
    const { row, line, values, echo } = raw;
    switch (verdict.kind) {
      case 'invalid':
        return this.record(
          { row, line, outcome: 'invalid', errorType: 'validation', errorCode: 'invalid_row', errorMessage: verdict.issues, values, echo },
          verdict.issues,
        );
      case 'duplicate':
        return this.record({ row, line, outcome: 'duplicate', key: verdict.key, errorMessage: duplicateMessage(verdict, this.#options.where ?? 'row'), values, echo });
      case 'existing':
        return this.#existing(raw, verdict);
      case 'skipped':
        // Its `created` line from the earlier run stays in the results file: no new line.
        this.counts.skipped++;
        this.#options.onLine?.({ row, line, outcome: 'skipped', key: verdict.key, values });
        return this.#options.onRecord();
      case 'valid':
        return this.record({ row, line, outcome: 'valid', key: verdict.key, values, echo });
    }
  }

  /**
   * A row whose person the service already holds: `existing`, with that client's id. A client an
   * earlier run of this results file created is this import's own: the row changed since it was
   * created (its key differs), so it is `skipped`, with a line that says so (`changedRows`).
   */
  #existing(raw: RawRecord, verdict: Extract<RowVerdict, { kind: 'existing' }>): void {
    const { row, line, values, echo } = raw;
    const { held, key } = verdict;
    if (held.kind === 'several') {
      this.heldTwice++;
      const message = `the service holds this person as ${held.ids.length} clients (${held.ids.join(', ')}): not created again; choose which one is theirs`;
      return this.record({ row, line, outcome: 'existing', key, errorCode: 'held_several', errorMessage: message, values, echo });
    }
    if (!held.own) return this.record({ row, line, outcome: 'existing', key, clientId: held.id, values, echo });
    this.changedRows.push(row);
    const message = `changed since an earlier run of this results file created client ${held.id} from it: not sent again (the service has no update)`;
    this.record({ row, line, outcome: 'skipped', key, clientId: held.id, errorCode: 'changed_since_created', errorMessage: message, values, echo });
  }

  /**
   * A resumed row whose client the service holds with exactly the values this row sends: made
   * by an earlier run of the results file that stopped before its answer was written (or an
   * identical client made elsewhere). It is this row's client: `created`, not sent again.
   */
  createdUnrecorded(raw: RawRecord, key: string, id: string): void {
    const message = 'created by an earlier run of this results file whose answer was not recorded (it stopped): the service holds this row as sent; not sent again';
    this.record({ row: raw.row, line: raw.line, outcome: 'created', clientId: id, key, errorMessage: message, values: raw.values, echo: raw.echo });
  }

  /** A row read but not sent: after a stop, or signed when the run stopped. */
  notAttempted(raw: RawRecord, key?: string): void {
    this.record({ row: raw.row, line: raw.line, outcome: 'not_attempted', key, values: raw.values, echo: raw.echo });
  }

  stop(reason: StopReason, message: string, code: ErrorCode, summary?: { cause: string; fix: string }): void {
    this.stopped ??= { reason, message, code, ...summary };
  }

  /** Ctrl-C: stop reading; what is in flight finishes. */
  interrupted(): void {
    this.stop('interrupted', 'interrupted', 'interrupted');
  }

  /** After a stop (auth, --max-errors, Ctrl-C) nothing more goes on the wire; what is on it finishes. */
  halted(): boolean {
    return this.#options.signal?.aborted === true || (this.stopped !== undefined && this.stopped.reason !== 'input_error');
  }

  /** A results or failed file that cannot be written: stop sending, finish in flight, then fail. */
  outputFailed(error: unknown): void {
    this.outputFailure ??= error;
    this.stop('output_error', String((error as Error).message), 'output_failed');
  }

  topErrors(count: number): { code: string; count: number }[] {
    return [...this.#errorCodes]
      .map(([code, n]) => ({ code, count: n }))
      .sort((a, b) => b.count - a.count)
      .slice(0, count);
  }
}

/** `same idempotency key as line 3`, or `repeats line 12's e-mail; address differs: …` (a worksheet's: `row 12`). */
function duplicateMessage(verdict: Extract<RowVerdict, { kind: 'duplicate' }>, where: 'line' | 'row'): string {
  const { firstRow, person } = verdict;
  if (person === undefined) return `same idempotency key as ${where} ${firstRow}`;
  const differs = person.differs?.replaceAll(`(row ${firstRow})`, `(${where} ${firstRow})`) ?? `${where} ${firstRow} is too far back to compare`;
  return `repeats ${where} ${firstRow}'s ${person.label}; ${differs}`;
}
