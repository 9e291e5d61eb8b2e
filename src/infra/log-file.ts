/**
 * `--log-file FILE`: one JSON line per request attempt and per run event, appended, for audits
 * of unattended runs. Only what happened goes in (times, operation, page or row number, status,
 * attempt, latency, request id, error code): never a header, a body, a token, a key, an
 * idempotency key or a client's field.
 */
import { closeSync, writeSync } from 'node:fs';
import { makeParentFolders } from './folders.js';
import { appendPrivate } from './output-files.js';
import { redactSecrets } from './redact.js';
import type { AttemptEvent } from '../service/client.js';
import type { OutageEvent } from '../service/outage.js';

export interface LogFile {
  attempt(event: AttemptEvent): void;
  /** A run event: `event` names it; `fields` must hold no personal data. */
  run(event: string, fields?: Record<string, unknown>): void;
  /** A circuit breaker transition (the reason's text is left out: it may name a proxy URL). */
  outage(event: OutageEvent): void;
  close(): void;
}

const OPERATIONS: Record<string, string> = { 'GET /v1/clients': 'list_clients', 'POST /v1/client': 'create_client' };

const OUTAGE_EVENTS: Record<OutageEvent['type'], string> = {
  paused: 'outage_paused',
  probeFailed: 'outage_still_down',
  resumed: 'outage_resumed',
  stopped: 'outage_stopped',
};

export function openLogFile(path: string, command: string): LogFile {
  makeParentFolders([{ file: path, private: true }]);
  const fd = appendPrivate(path);
  let open = true;
  const line = (record: Record<string, unknown>) => {
    if (!open) return;
    // One write(2) per line in append mode: lines of two runs never interleave mid-line.
    writeSync(fd, `${JSON.stringify({ time: new Date().toISOString(), pid: process.pid, command, ...record })}\n`);
  };
  const run = (event: string, fields: Record<string, unknown> = {}) => line({ kind: 'run', event, ...fields });
  return {
    attempt(event) {
      const operation = OPERATIONS[`${event.method} ${event.path.replace(/^.*(\/v1\/)/, '$1')}`] ?? 'request';
      line({
        kind: 'attempt',
        operation,
        page: event.page,
        row: event.row,
        attempt: event.attempt,
        status: event.status,
        latency_ms: event.latencyMs,
        request_id: event.requestId,
        error: event.error,
      });
    },
    run,
    outage(event) {
      run(OUTAGE_EVENTS[event.type], {
        down_for_ms: 'downForMs' in event ? event.downForMs : 0,
        probe_in_ms: 'probeInMs' in event ? event.probeInMs : undefined,
      });
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/**
 * Runs `work` with the log open (none without a path); an error it throws is logged as
 * `run_failed` with its code, exit code and message (secrets redacted) and what `context`
 * adds (the file the run was writing), and the log is closed either way.
 */
export async function withLogFile<T>(
  path: string | undefined,
  command: string,
  work: (log: LogFile | undefined) => Promise<T>,
  context?: () => Record<string, unknown>,
): Promise<T> {
  const log = path === undefined ? undefined : openLogFile(path, command);
  try {
    return await work(log);
  } catch (error) {
    log?.run('run_failed', {
      ...context?.(),
      error: (error as { code?: string }).code ?? 'error',
      message: redactSecrets(error instanceof Error ? error.message : String(error)),
      exit_code: (error as { exitCode?: number }).exitCode ?? 1,
    });
    throw error;
  } finally {
    log?.close();
  }
}
