/**
 * Sends one row: signed ahead of the wire, posted in a wire slot, and its outcome recorded
 * inside that slot, so a stop it causes (401/403, --max-errors, an unwritable results file)
 * is in force before the slot goes to the next row. A send never rejects.
 */
import { AuthError, CcsError, ConnectionError, OutageError, ServiceError } from '../../errors.js';
import type { PreparedCreate, Reply, ServiceClient } from '../../service/client.js';
import type { Client } from '../../service/schemas.js';
import { heldBeforeRun } from '../record/existing.js';
import { toCreateBody } from '../row/key.js';
import { bodyHash } from '../record/trail.js';
import type { RawRecord } from '../read/index.js';
import type { Recorder } from '../record/recorder.js';
import type { SendWindow } from './send-window.js';
import { AnswerStreak, stopOnMissingRoute, systemicMessage } from './systemic.js';
import type { ClientFields } from '../row/validate-row.js';

export type SendRow = (raw: RawRecord, fields: ClientFields, key: string) => Promise<void>;

/** `runStartedMs`: when the run started on this machine's clock, to tell clients the service already held (existing.ts). */
export function createSender(
  service: ServiceClient,
  window: SendWindow,
  recorder: Recorder,
  runStartedMs: number,
  streak = new AnswerStreak(),
): SendRow {
  const send = async (raw: RawRecord, fields: ClientFields, key: string) => {
    if (recorder.halted()) return recorder.notAttempted(raw, key);
    let prepared: PreparedCreate | undefined;
    try {
      // Asked again when its turn to sign comes: after a stop, the rows waiting for the signer
      // are not signed (a backlog of them would cost seconds of CPU before the run could end).
      prepared = await window.signing(async () => (recorder.halted() ? undefined : service.prepareCreate(toCreateBody(fields, key))));
    } catch (error) {
      return recordFailure(recorder, raw, key, error);
    }
    if (prepared === undefined) return recorder.notAttempted(raw, key);
    await window.wire(async (slot) => {
      try {
        if (recorder.halted()) return recorder.notAttempted(raw, key);
        let reply: Reply<Client>;
        try {
          reply = await service.sendCreate(prepared, { row: raw.row, slot });
        } catch (error) {
          return recordFailure(recorder, raw, key, error, streak, bodyHash(prepared.bytes), service.baseUrl);
        }
        streak.answer(undefined, raw.row, '');
        recorder.record({
          row: raw.row,
          line: raw.line,
          outcome: 'created',
          clientId: reply.data.id,
          httpStatus: reply.status,
          attempts: reply.attempts,
          key,
          requestId: reply.requestId,
          values: raw.values,
          echo: raw.echo,
          bodySha256: bodyHash(prepared.bytes),
        });
        if (heldBeforeRun(runStartedMs, reply)) recorder.replayed++;
      } catch (error) {
        recorder.outputFailed(error);
      }
    });
  };
  const outputFailed = (error: unknown) => recorder.outputFailed(error);
  return (raw, fields, key) => send(raw, fields, key).catch(outputFailed);
}

/** `bodySha256`: the body that went out, when the failure came after sending (to `baseUrl`). */
function recordFailure(recorder: Recorder, raw: RawRecord, key: string, error: unknown, streak?: AnswerStreak, bodySha256?: string, baseUrl = ''): void {
  const failure = asServiceError(error);
  if (failure.code === 'wait_interrupted') {
    // Ctrl-C during a retry wait: it may exist already; resume sends it again under the same key.
    recorder.record({
      row: raw.row,
      line: raw.line,
      outcome: 'not_attempted',
      attempts: failure.attempts,
      key,
      errorMessage: failure.message,
      values: raw.values,
      echo: raw.echo,
    });
    return;
  }
  if (failure instanceof ConnectionError || failure instanceof OutageError) {
    // Unreachable or down: nothing got through, or resume sends it again under the same key.
    recorder.stop(
      failure instanceof ConnectionError ? 'connection' : 'outage',
      failure.message,
      failure.code,
      failure instanceof ConnectionError ? { cause: failure.message.slice(0, -failure.fix.length - 2), fix: failure.fix } : undefined,
    );
    recorder.record({
      row: raw.row,
      line: raw.line,
      outcome: 'not_attempted',
      attempts: failure.attempts,
      key,
      errorType: failure.type,
      errorCode: failure.code,
      errorMessage: failure.message,
      values: raw.values,
      echo: raw.echo,
    });
    return;
  }
  if (failure instanceof AuthError) recorder.stop('auth', failure.message, 'auth', authStop(failure));
  // The first answers all 404/405: held back until it is known whether the base URL is wrong.
  const unsend = (message: string) =>
    recorder.record({ row: raw.row, line: raw.line, outcome: 'not_attempted', httpStatus: failure.status, attempts: failure.attempts, key, errorType: failure.type, errorCode: 'endpoint_not_found', errorMessage: message, values: raw.values, echo: raw.echo });
  const fail = () => recordFailed(recorder, raw, key, failure, streak, bodySha256);
  if (streak?.opening.failed(failure, { fail, unsend }, baseUrl) === true) {
    stopOnMissingRoute(streak.opening, recorder);
    return;
  }
  fail();
}

function recordFailed(recorder: Recorder, raw: RawRecord, key: string, failure: ServiceError, streak?: AnswerStreak, bodySha256?: string): void {
  // After the row's own line below: the row that makes the streak systemic is failed, the rest not sent.
  const systemic = streak?.answer(failure.code, raw.row, failure.message) === true;
  recorder.record(
    {
      row: raw.row,
      line: raw.line,
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
      echo: raw.echo,
      bodySha256,
    },
    failure.message,
  );
  if (systemic) recorder.stop('systemic_response', systemicMessage(streak!.systemic()!), 'systemic_response');
}

function asServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const message = error instanceof CcsError || error instanceof Error ? error.message : String(error);
  return new ServiceError(`request not completed: ${message}`, { type: 'client_error' }, { code: 'not_sent' });
}

/** A refused token or signature in one line of cause and one of fix (the full text stays in the results file). */
export function authStop(failure: AuthError): { cause: string; fix: string } {
  const what = [failure.status, failure.errorCode ?? failure.type].filter(Boolean).join(' ');
  if (failure.status === 403) {
    return {
      cause: `the service refused this machine or token (${what})`,
      fix: "check this machine's IP is on the service's allow-list and the token may create clients; ccs-bulk check tests the set-up without creating anything",
    };
  }
  return {
    cause: `the service refused the token or the signature (${what})`,
    fix: 'check the token (CCS_TOKEN or --token-file) and the signing key: ccs-bulk check tests both, and the signature scheme, without creating anything',
  };
}
