/**
 * A run that stopped part-way is an error to the code that called it: importClients rejects
 * with the typed error of the stop's cause — AuthError (401/403), ConnectionError, OutageError,
 * InputError (the file became unreadable), StoppedError (an abort, `maxErrors`, a gap in the
 * account, systemic answers) — with what the run did attached. Rows that merely failed or were
 * invalid are not a stop: that run resolves.
 */
import { AuthError, type CodeOf, ConnectionError, InputError, OutageError, OutputError, StoppedError } from '../../errors.js';
import type { Stop } from './recorder.js';

/** What a stopped run did, attached to its error: the summary, and how to continue it. */
export interface RunStopped<S> {
  /** What the run did before it stopped: the same summary a finished run resolves with, `stopped` set. */
  summary: S;
  /** Pass these with the same other options to continue the run (`resume: true` on the same results file). */
  resume: {
    /** The results file the stopped run wrote. */
    results: string;
    /** Always true: continue that results file. */
    resume: true;
  };
}

/** The error for a stop, with `summary` and `resume` attached; `abortReason` becomes an abort's `cause`. */
export function stopError<S>(stop: Stop, summary: S, results: string, abortReason?: unknown): Error & RunStopped<S> {
  const error = errorOf(stop, abortReason);
  return Object.assign(error, { summary, resume: { results, resume: true as const } });
}

function errorOf(stop: Stop, abortReason: unknown): Error {
  switch (stop.reason) {
    case 'auth':
      return new AuthError(stop.message);
    case 'connection':
      return stop.fix !== undefined
        ? new ConnectionError(stop.cause ?? stop.message, stop.fix, { code: stop.code as CodeOf<'ConnectionError'> })
        : new ConnectionError(stop.message, 'checkSetup (or ccs-bulk check) tests the connection');
    case 'outage':
      return new OutageError(stop.message);
    case 'input_error':
      return new InputError(stop.message, stop.code as CodeOf<'InputError'>);
    case 'interrupted':
      return new StoppedError('the run was stopped (its signal was aborted)', 'interrupted', { cause: abortReason });
    case 'max_errors':
    case 'incomplete_run':
    case 'systemic_response':
      return new StoppedError(stop.message, stop.reason);
    case 'output_error':
      return new OutputError(stop.message);
  }
}
