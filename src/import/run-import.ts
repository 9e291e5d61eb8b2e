/**
 * The import pipeline: read → map columns → validate → key → drop duplicates → send → record.
 * The plan (source, column mapping, results file) is settled before the first request; then
 * rows stream through a bounded send window, and every row read gets exactly one outcome.
 */
import { availableParallelism } from 'node:os';
import { AuthError, CcsError, ConnectionError, InputError, OutageError, ServiceError } from '../errors.js';
import { createProgress, NO_PROGRESS, type ProgressMode } from '../progress.js';
import type { PreparedCreate, Reply, ServiceClient } from '../service/client.js';
import type { Client } from '../service/schemas.js';
import type { Field } from './fields.js';
import { keyOf, toCreateBody } from './key.js';
import { KeySet } from './key-set.js';
import type { DateFormat } from './normalize.js';
import { planImport } from './plan.js';
import type { RawRecord, ReadOptions, SourceInfo } from './read/index.js';
import { OUTCOMES, type Outcome, type ResultLine } from './results.js';
import { createSendWindow } from './send-window.js';
import { type ClientFields, rowValidator } from './validate-row.js';

export interface ImportClientsOptions {
  file: string;
  /** Required unless dryRun. */
  service?: ServiceClient | undefined;
  dryRun?: boolean;
  results?: string;
  failed?: string | undefined;
  resume?: boolean;
  overwrite?: boolean;
  map?: Partial<Record<Field, string>>;
  dateFormat?: DateFormat;
  read?: ReadOptions;
  liquidityType?: string;
  concurrency?: number;
  rate?: number | undefined;
  maxErrors?: number | undefined;
  /** Abort = stop reading, finish what is in flight, flush (Ctrl-C). */
  signal?: AbortSignal | undefined;
  progress?: { stream: NodeJS.WritableStream & { isTTY?: boolean }; mode: ProgressMode; intervalMs?: number };
  /** Called once the plan is settled, before any row is sent (validate prints it). */
  onPlan?: (plan: ImportPlan) => void;
}

export interface ImportPlan {
  source: SourceInfo;
  columns: Partial<Record<Field, string>>;
  unknownColumns: string[];
  results: string;
  resumedCreated: number;
}

export type StopReason = 'auth' | 'interrupted' | 'max_errors' | 'input_error' | 'output_error' | 'connection' | 'outage';

export interface ImportSummary {
  file: string;
  results: string;
  failed: string | undefined;
  dryRun: boolean;
  rows: number;
  counts: Record<Outcome, number>;
  topErrors: { code: string; count: number }[];
  elapsedMs: number;
  rowsPerSecond: number;
  source: SourceInfo;
  columns: Partial<Record<Field, string>>;
  unknownColumns: string[];
  stopped: { reason: StopReason; message: string; code: string } | undefined;
}

export async function importClients(options: ImportClientsOptions): Promise<ImportSummary> {
  const dryRun = options.dryRun === true;
  const service = options.service;
  if (!dryRun && !service) throw new TypeError('importClients needs a service client unless dryRun');
  const started = Date.now();
  const resultsPath = options.results ?? `${options.file}.results.csv`;
  // Before any file is opened: it refuses a concurrency that is not a positive integer.
  const window = createSendWindow({
    concurrency: options.concurrency ?? 8,
    ahead: Math.max(16, 4 * availableParallelism()),
    rate: options.rate,
    signal: options.signal,
  });

  const { source, plan, results, failedFile, columns } = await planImport({
    file: options.file,
    results: resultsPath,
    failed: options.failed,
    // A dry run is as busy as its parser: a large file is parsed on a second thread. A real
    // import waits on signing and the service; the thread would only add memory there.
    read: { thread: dryRun ? 'large' : 'never', ...options.read },
    map: options.map ?? {},
    resume: options.resume === true,
    overwrite: options.overwrite === true,
    dryRun,
  });
  // From here on the files are open: whatever throws before the read loop closes them (the
  // reader thread, if any, would otherwise wait for its consumer).
  let validateRow: ReturnType<typeof rowValidator>;
  try {
    options.onPlan?.({
      source: source.info,
      columns,
      unknownColumns: plan.unknown,
      results: resultsPath,
      resumedCreated: results.created.size,
    });
    validateRow = rowValidator(plan, {
      dateFormat: options.dateFormat ?? 'YYYY-MM-DD',
      liquidityType: options.liquidityType ?? 'chain',
    });
  } catch (error) {
    await source.close();
    results.close();
    failedFile?.close();
    throw error;
  }
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const errorCodes = new Map<string, number>();
  const seen = new KeySet();
  const progress = options.progress ? createProgress({ unit: 'rows', ...options.progress }) : NO_PROGRESS;
  let rows = 0;
  let errors = 0;
  let stopped: ImportSummary['stopped'];
  // A results or failed file that cannot be written: stop sending, finish in flight, then fail.
  let outputFailure: unknown;

  const stop = (reason: StopReason, message: string, code: string) => {
    stopped ??= { reason, message, code };
  };
  const snapshot = () => ({
    done: rows,
    fraction: source.info.sizeBytes > 0 ? source.bytesRead() / source.info.sizeBytes : undefined,
    counters: dryRun
      ? { valid: counts.valid, invalid: counts.invalid, duplicate: counts.duplicate }
      : { created: counts.created, failed: counts.failed, invalid: counts.invalid, skipped: counts.skipped },
  });
  const tick = () => progress.update(snapshot);

  const record = (line: ResultLine, error?: string) => {
    counts[line.outcome]++;
    results.write(line);
    if (error !== undefined) {
      failedFile?.write(line.values, error, line.outcome === 'failed' ? line.key : undefined);
      const code = line.errorCode ?? line.outcome;
      errorCodes.set(code, (errorCodes.get(code) ?? 0) + 1);
      errors++;
      if (options.maxErrors !== undefined && errors >= options.maxErrors) {
        stop(
          'max_errors',
          `stopped after ${errors} errors (--max-errors ${options.maxErrors})`,
          'max_errors',
        );
      }
    }
    tick();
  };

  // After a stop (auth, --max-errors, Ctrl-C) nothing more goes on the wire; what is on it finishes.
  const halted = () =>
    options.signal?.aborted === true || (stopped !== undefined && stopped.reason !== 'input_error');
  const send = async (raw: RawRecord, fields: ClientFields, key: string) => {
    const notAttempted = () => record({ row: raw.row, outcome: 'not_attempted', key, values: raw.values });
    if (halted()) return notAttempted();
    let prepared: PreparedCreate;
    try {
      prepared = await window.signing(() => service!.prepareCreate(toCreateBody(fields, key)));
    } catch (error) {
      return recordFailure(raw, key, error);
    }
    // The outcome is recorded inside the wire slot: a stop it causes (401/403, --max-errors,
    // a results file that cannot be written) is in force before the slot goes to the next row.
    await window.wire(async () => {
      try {
        if (halted()) return notAttempted();
        let reply: Reply<Client>;
        try {
          reply = await service!.sendCreate(prepared);
        } catch (error) {
          return recordFailure(raw, key, error);
        }
        record({
          row: raw.row,
          outcome: 'created',
          clientId: reply.data.id,
          httpStatus: reply.status,
          attempts: reply.attempts,
          key,
          requestId: reply.requestId,
          values: raw.values,
        });
      } catch (error) {
        outputFailed(error);
      }
    });
  };
  /** A results or failed file that cannot be written: stop sending, finish in flight, then fail. */
  const outputFailed = (error: unknown) => {
    outputFailure ??= error;
    stop('output_error', String((error as Error).message), 'output_failed');
  };

  const recordFailure = (raw: RawRecord, key: string, error: unknown) => {
    const failure = asServiceError(error);
    if (failure.code === 'interrupted') {
      // Ctrl-C during a retry wait: it may exist already; resume sends it again under the same key.
      record({ row: raw.row, outcome: 'not_attempted', attempts: failure.attempts, key, errorMessage: failure.message, values: raw.values });
      return;
    }
    if (failure instanceof ConnectionError || failure instanceof OutageError) {
      // Unreachable or down: nothing got through, or resume sends it again under the same key.
      stop(failure instanceof ConnectionError ? 'connection' : 'outage', failure.message, failure.code);
      record({ row: raw.row, outcome: 'not_attempted', attempts: failure.attempts, key, errorType: failure.type, errorCode: failure.code, errorMessage: failure.message, values: raw.values });
      return;
    }
    if (failure instanceof AuthError) stop('auth', failure.message, 'auth');
    record(
      {
        row: raw.row,
        outcome: 'failed',
        httpStatus: failure.status,
        attempts: failure.attempts,
        key,
        errorType: failure.type,
        errorCode: failure.errorCode ?? failure.code,
        errorParam: failure.param,
        errorMessage: failure.message,
        requestId: failure.requestId,
        values: raw.values,
      },
      failure.message,
    );
  };

  try {
    reading: for await (const batch of source.batches) {
      if (rows >= SIZING_ROWS && seen.size + batch.length > seen.room) {
        // The rows so far show the file's bytes per row: size the key set for the whole file
        // at once, rather than doubling it (and holding both tables) as it fills.
        seen.reserve(Math.max(expectedRows(rows, source), Math.ceil((seen.size + batch.length) * 1.1)));
      }
      for (const raw of batch) {
        if (options.signal?.aborted) {
          stop('interrupted', 'interrupted', 'interrupted');
          break reading;
        }
        rows++;
        // After a stop (auth, --max-errors) the rest of the file is still accounted for.
        if (stopped) {
          record({ row: raw.row, outcome: 'not_attempted', values: raw.values });
          continue;
        }
        const check = validateRow(raw.values);
        if (!check.ok) {
          const message = check.issues.join('; ');
          record(
            {
              row: raw.row,
              outcome: 'invalid',
              errorType: 'validation',
              errorCode: 'invalid_row',
              errorMessage: message,
              values: raw.values,
            },
            message,
          );
          continue;
        }
        const print = keyOf(check.value);
        const key = print.key;
        const first = seen.add(print, raw.row);
        if (first !== undefined) {
          record({
            row: raw.row,
            outcome: 'duplicate',
            key,
            errorMessage: `same idempotency key as row ${first}`,
            values: raw.values,
          });
          continue;
        }
        if (results.created.size > 0 && results.created.has(print)) {
          // Its `created` line from the earlier run stays in the results file.
          counts.skipped++;
          tick();
          continue;
        }
        if (dryRun) {
          record({ row: raw.row, outcome: 'valid', key, values: raw.values });
          continue;
        }
        await window.slot();
        if (options.signal?.aborted) {
          record({ row: raw.row, outcome: 'not_attempted', key, values: raw.values });
          stop('interrupted', 'interrupted', 'interrupted');
          break reading;
        }
        window.run(() => send(raw, check.value, key).catch(outputFailed));
      }
    }
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    stop('input_error', error.message, error.code);
  } finally {
    await window.drain();
    await source.close();
    progress.stop();
    results.close();
    failedFile?.close();
  }
  if (outputFailure !== undefined) throw outputFailure;
  // Ctrl-C after the last row was read still stopped the rows in flight.
  if (options.signal?.aborted) stop('interrupted', 'interrupted', 'interrupted');

  const elapsedMs = Date.now() - started;
  return {
    file: options.file,
    results: resultsPath,
    failed: options.failed,
    dryRun,
    rows,
    counts,
    topErrors: [...errorCodes]
      .map(([code, count]) => ({ code, count }))
      .sort((a, b) => b.count - a.count)
      .slice(0, 5),
    elapsedMs,
    rowsPerSecond: Math.round(rows / Math.max(0.001, elapsedMs / 1000)),
    source: source.info,
    columns,
    unknownColumns: plan.unknown,
    stopped,
  };
}

/** Rows read before the file's size is used to size the key set (the estimate is then within a few %). */
const SIZING_ROWS = 8192;

/** The file's rows, from the bytes per row so far, with a 15% margin (read-ahead, longer rows later). */
function expectedRows(rows: number, source: { info: SourceInfo; bytesRead(): number }): number {
  const read = source.bytesRead();
  if (read <= 0 || source.info.sizeBytes <= read) return rows;
  return Math.ceil(((rows * source.info.sizeBytes) / read) * 1.15);
}

function asServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const message = error instanceof CcsError || error instanceof Error ? error.message : String(error);
  return new ServiceError(
    `request not completed: ${message}`,
    { type: 'client_error' },
    { code: 'not_sent' },
  );
}
