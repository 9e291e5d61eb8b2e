/**
 * A row's outcome as code receives it (importClients' `onRow`): the same facts as its results
 * line, as an object. A caller writing each client id back to its own table reads `clientId`
 * beside its own key in `values`.
 */
import type { Outcome, ResultLine } from './results.js';

/** A row's outcome, as `onRow` receives it: the same facts as its results line, as an object. */
export interface RowResult {
  /** The 1-based data row (the results file's `row`): for rows from code, their place in the iteration. */
  row: number;
  /**
   * What became of the row: `created`, `existing`, `valid` (dry run), `invalid`, `duplicate`,
   * `failed`, `not_attempted` (the run stopped first) or `skipped` (created by the run resumed).
   */
  outcome: Outcome;
  /** The client made (`created`), already there (`existing`), or made by an earlier run (`skipped` after an edit). */
  clientId: string | undefined;
  /** The key the row was (or would be) sent with: the same row always gets the same key. */
  idempotencyKey: string | undefined;
  /** Why the row is not created: the service's error (`failed`), the checks' findings (`invalid`), the first row it repeats (`duplicate`)… */
  error: RowError | undefined;
  /** HTTP attempts made for it (0 when it was not sent). */
  attempts: number;
  /** The row's values as read, by column name (for rows from code: the object's keys). */
  values: Record<string, string>;
}

/** Why a row was not created, as its results line's `error_*` columns say it. */
export interface RowError {
  /** `validation` for an invalid row; the service's error type for a failed one. */
  type: string | undefined;
  /** `invalid_row`, the service's code (`email_taken`…), or ours (`changed_since_created`, `held_several`). */
  code: string | undefined;
  /** The field the service named. */
  param: string | undefined;
  /** What is wrong, in words: every problem of an invalid row, the service's message for a failed one. */
  message: string;
  /** The HTTP status of the service's last answer for the row; undefined when none came or it was not sent. */
  httpStatus: number | undefined;
  /** The service's request id for that answer: quote it to the service's support. */
  requestId: string | undefined;
}

/** The RowResult of a results line; `headers` name the values. */
export function rowResultOf(line: ResultLine, headers: readonly string[]): RowResult {
  const values: Record<string, string> = {};
  for (let i = 0; i < headers.length; i++) values[headers[i]!] = line.values[i] ?? '';
  const message = line.errorMessage;
  return {
    row: line.row,
    outcome: line.outcome,
    clientId: line.clientId,
    idempotencyKey: line.key,
    error:
      message === undefined && line.errorCode === undefined
        ? undefined
        : {
            type: line.errorType,
            code: line.errorCode,
            param: line.errorParam,
            message: message ?? line.errorCode ?? '',
            httpStatus: line.httpStatus,
            requestId: line.requestId,
          },
    attempts: line.attempts ?? 0,
    values,
  };
}
