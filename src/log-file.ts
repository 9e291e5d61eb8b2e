/**
 * `--log-file FILE`: one JSON line per request attempt and per run event, appended, for audits
 * of unattended runs. Only what happened goes in (times, operation, page, status, attempt,
 * latency, request id, error code): never a header, a body, a token, a key or a client's field.
 */
import { closeSync, writeSync } from 'node:fs';
import { openPrivate } from './import/output-files.js';
import type { AttemptEvent } from './service/client.js';

export interface LogFile {
  attempt(event: AttemptEvent): void;
  /** A run event: `event` names it; `fields` must hold no personal data. */
  run(event: string, fields?: Record<string, unknown>): void;
  close(): void;
}

const OPERATIONS: Record<string, string> = { 'GET /v1/clients': 'list_clients', 'POST /v1/client': 'create_client' };

export function openLogFile(path: string, command: string): LogFile {
  const fd = openPrivate(path, 'a');
  let open = true;
  const line = (record: Record<string, unknown>) => {
    if (!open) return;
    // One write(2) per line in append mode: lines of two runs never interleave mid-line.
    writeSync(fd, `${JSON.stringify({ time: new Date().toISOString(), pid: process.pid, command, ...record })}\n`);
  };
  return {
    attempt(event) {
      const operation = OPERATIONS[`${event.method} ${event.path.replace(/^.*(\/v1\/)/, '$1')}`] ?? 'request';
      line({
        kind: 'attempt',
        operation,
        page: event.page,
        attempt: event.attempt,
        status: event.status,
        latency_ms: event.latencyMs,
        request_id: event.requestId,
        error: event.error,
      });
    },
    run(event, fields = {}) {
      line({ kind: 'run', event, ...fields });
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
