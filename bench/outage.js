/**
 * The circuit breaker's figure: a service outage in the middle of an import. An in-process
 * sandbox answers 503 to everything from AT s after the import's first request, for FOR s;
 * the import (the real CLI, a child process) runs through it. Prints rows, requests, failed
 * rows, duplicates and the duration, and checks every row was created exactly once.
 *
 *   npm run build && node bench/outage.js [--rows 5000] [--at 5] [--for 60] [--latency 20]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import { readFile } from 'node:fs/promises';
import { startSandbox } from '../dist/index.js';
import { writeClientsCsv } from './lib/data.js';
import { BIN, childEnv } from './lib/run-child.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '5000' },
    at: { type: 'string', default: '5' },
    for: { type: 'string', default: '60' },
    latency: { type: 'string', default: '20' },
    retries: { type: 'string', default: '5' },
  },
});
const rows = Number(values.rows);
const retries = Number(values.retries);
const outage = { atMs: Number(values.at) * 1000, forMs: Number(values.for) * 1000, kind: '503' };

const dir = await mkdtemp(join(tmpdir(), 'ccs-outage-'));
const sandbox = await startSandbox({ latencyMs: Number(values.latency), outage });
try {
  const input = join(dir, 'clients.csv');
  const results = join(dir, 'clients.results.csv');
  const keyFile = join(dir, 'private.pem');
  await writeClientsCsv(input, rows);
  await writeFile(keyFile, sandbox.privateKeyPem, { mode: 0o600 });
  const started = performance.now();
  const run = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'import', input, '--results', results, '--retries', String(retries), '--json', '--progress-interval', '10'], {
      env: childEnv({ CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token, CCS_SIGNING_KEY_FILE: keyFile }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
  const seconds = (performance.now() - started) / 1000;
  const summary = JSON.parse(run.stdout);
  const lines = parse(await readFile(results), { columns: true });
  const keys = lines.map((line) => line.idempotency_key);
  const stored = keys.filter((key) => sandbox.store.byIdempotencyKey(key) !== undefined).length;
  const figures = {
    rows,
    outage: `${outage.forMs / 1000} s of 503 from ${outage.atMs / 1000} s after the first request`,
    exitCode: run.code,
    created: summary.counts.created,
    failed: summary.counts.failed,
    notAttempted: summary.counts.not_attempted,
    clientsOnService: sandbox.store.size,
    rowsStoredOnce: stored,
    duplicates: sandbox.store.size - stored,
    requests: sandbox.stats.requests,
    requestsAnswered503: sandbox.stats.faults.outage,
    rowsTimesRetries: rows * retries,
    durationSeconds: Math.round(seconds * 10) / 10,
  };
  console.log(JSON.stringify(figures, null, 2));
  const good = run.code === 0 && figures.failed === 0 && figures.created === rows && stored === rows && figures.duplicates === 0 && figures.requests < rows * retries;
  console.log(good ? 'outage: every row created exactly once, none failed, requests < rows × retries' : 'outage: FAILED');
  process.exitCode = good ? 0 : 1;
} finally {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
}
