/**
 * import --log-file: a JSON line per request attempt carrying the input's row number (matching
 * the results file, retries included) and per run event, through a credentialed proxy and a
 * faulty service, with no token, key, proxy password, idempotency key or client field in it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, expectNoneOf, readResults, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';
import { startProxy, type TestProxy } from './proxy.helpers.js';
import { IMPORT_DEFAULTS } from '../src/import/defaults.js';

const ctx = useSandbox({ seedRandom: 11 });
const PASSWORD = 's3cret-log-proxy-pw';
let proxy: TestProxy;

beforeAll(async () => {
  proxy = await startProxy({ credentials: { user: 'auditor', password: PASSWORD } });
});
afterAll(async () => {
  await proxy?.close();
});

interface LogLine {
  kind: 'attempt' | 'run';
  command: string;
  event?: string;
  operation?: string;
  row?: number;
  attempt?: number;
  status?: number;
  latency_ms?: number;
  [key: string]: unknown;
}

describe('import --log-file', () => {
  it('one line per POST attempt with its row number, as in the results file; run events; no secret or personal value', async () => {
    const rows = validRows(60, 700);
    const invalid = ['Nobody', 'not-an-email', 'DE', 'Somewhere 1', 'EUR', '2024-05-17'];
    const input = join(ctx.dir, 'logged.csv');
    // Rows 61 (invalid) and 62 (a repeat of row 1) are never sent: no attempt line names them.
    await writeFile(input, stringify([CLIENT_HEADER, ...rows, invalid, rows[0]!]));
    const results = join(ctx.dir, 'logged.results.csv');
    const log = join(ctx.dir, 'import.log');
    const env = { ...ctx.env(), CCS_PROXY: `http://auditor:${PASSWORD}@127.0.0.1:${proxy.port}` };
    ctx.sandbox.setFaults({ failRate: 0.2, throttleRate: 0.05, resetRate: 0.05, retryAfterSeconds: 0 });
    let first;
    try {
      first = await runCli(['import', input, '--results', results, '--retries', '10', '--log-file', log, '--quiet'], { env });
    } finally {
      ctx.sandbox.setFaults({ failRate: 0, throttleRate: 0, resetRate: 0 });
    }
    // --quiet: one line for the exit 1, with the counts and where the rows to fix are.
    expect(first.stderr).toBe(`ccs-bulk: import finished with rows not imported (rows_failed), exit 1: 60 created, 0 failed, 1 invalid, 1 duplicate; rows to fix: see ${results}\n`);
    expect(first.code).toBe(1);
    // Resumed: every row is skipped, nothing is sent; the log says so.
    const again = await runCli(['import', input, '--results', results, '--resume', '--log-file', log, '--quiet'], { env });
    expect(again.code).toBe(1);
    expect(proxy.tunnels.length).toBeGreaterThan(0);

    const text = await readFile(log, 'utf8');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line) as LogLine);
    const attempts = lines.filter((line) => line.kind === 'attempt');
    const posts = attempts.filter((line) => line.operation === 'create_client');
    // The rest list who the service holds, before the first row of each run.
    expect(attempts.filter((line) => line.operation !== 'create_client').every((line) => line.operation === 'list_clients')).toBe(true);
    expect(posts.length).toBeGreaterThan(0);
    for (const line of posts) {
      expect(line.command).toBe('import');
      expect(typeof line.row).toBe('number');
      expect(typeof line.attempt).toBe('number');
      expect(typeof line.latency_ms).toBe('number');
    }
    expect(posts.some((line) => line.attempt! > 1)).toBe(true);

    const recorded = await readResults(results);
    const created = recorded.filter((line) => line[1] === 'created');
    expect(created).toHaveLength(60);
    const perRow = new Map<number, LogLine[]>();
    for (const line of posts) perRow.set(line.row!, [...(perRow.get(line.row!) ?? []), line]);
    // Each created row: as many attempt lines as its `attempts` cell, numbered 1..n, the last a 200.
    for (const [row, , , , attemptsCell] of created) {
      const mine = perRow.get(Number(row)) ?? [];
      expect(mine.map((line) => line.attempt).sort((a, b) => a! - b!), `row ${row}`).toEqual(
        Array.from({ length: Number(attemptsCell) }, (_, i) => i + 1),
      );
      expect(mine.find((line) => line.attempt === Number(attemptsCell))?.status).toBe(200);
    }
    expect([...perRow.keys()].sort((a, b) => a - b)).toEqual(created.map((line) => Number(line[0])).sort((a, b) => a - b));
    expect(perRow.has(61) || perRow.has(62)).toBe(false);

    const events = lines.filter((line) => line.kind === 'run');
    expect(events.map((line) => line.event).filter((event) => !event!.startsWith('outage_'))).toEqual([
      'run_started',
      'service_listed',
      'run_finished',
      'run_started',
      'run_resumed',
      'service_listed',
      'run_finished',
    ]);
    expect(events.find((line) => line.event === 'service_listed')).toMatchObject({ clients_listed: expect.any(Number), people_known: expect.any(Number) });
    expect(events[0]).toMatchObject({ input, results, service: ctx.sandbox.url, concurrency: 'auto', max_concurrency: IMPORT_DEFAULTS.maxConcurrency });
    const finished = events.filter((line) => line.event === 'run_finished');
    expect(finished[0]).toMatchObject({ rows: 62, counts: { created: 60, invalid: 1, duplicate: 1 }, exit_code: 1 });
    expect(finished[0]!.concurrency).toMatchObject({ mode: 'auto' });
    expect(typeof finished[0]!.elapsed_ms).toBe('number');
    expect(events.find((line) => line.event === 'run_resumed')).toMatchObject({ rows_created_earlier: 60 });
    expect(finished[1]).toMatchObject({ counts: { skipped: 60, created: 0 } });

    const keyPem = await readFile(ctx.keyFile, 'utf8');
    expectNoneOf(text, [
      ctx.sandbox.token,
      PASSWORD,
      Buffer.from(`auditor:${PASSWORD}`).toString('base64'),
      ...keyPem.split('\n').filter((line) => !line.startsWith('-----')),
      ...recorded.flatMap((line) => [line[2]!, line[5]!]),
      ...[...rows, invalid].flatMap((row) => row.flatMap((cell) => cell.split('\n'))),
    ]);
  }, 120_000);
});
