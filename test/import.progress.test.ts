import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { createPrivateKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { exportClients } from '../src/export/run-export.js';
import { importClients } from '../src/import/run-import.js';
import type { ProgressSnapshot } from '../src/infra/progress-report.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { collector } from './export.helpers.js';
import { BIN, CLIENT_HEADER, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';

let input: string;

const ctx = useSandbox({ latencyMs: 20 });

beforeAll(async () => {
  input = join(ctx.dir, 'clients.csv');
  // 60 rows, two or four at a time, 20 ms each: 300 ms at the least, many progress intervals.
  await writeFile(input, stringify([CLIENT_HEADER, ...validRows(60)]));
});

describe('progress on stderr', () => {
  it('prints plain lines with rows/s and counts when stderr is not a terminal', async () => {
    const run = await runCli(['import', input, '--overwrite', '--concurrency', '2', '--progress-interval', '0.1'], {
      env: ctx.env(),
    });
    expect(run.code).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => /^ccs-bulk: \d+ rows, \d+\/s \((reading|sending) \d+%/.test(l));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1)).toMatch(/created \d+/);
    expect(run.stderr).toContain('60 created');
    // Rows finished, not rows read: never 100% nor an ETA of 0 while a row is unsent.
    for (const line of lines) {
      const done = Number(/^ccs-bulk: (\d+) rows/.exec(line)![1]);
      if (done < 60) expect(line, line).not.toMatch(/100%|ETA 0s/);
    }
  });

  it('the summary counts one row as "1 row"', async () => {
    const one = join(ctx.dir, 'one.csv');
    await writeFile(one, stringify([CLIENT_HEADER, ...validRows(1)]));
    const run = await runCli(['validate', one], { env: ctx.env() });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^Validated 1 row in \d+s/m);
  });

  it('--quiet prints nothing but errors', async () => {
    const run = await runCli(['import', input, '--overwrite', '--quiet', '--progress-interval', '0.1'], {
      env: ctx.env(),
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  });

  it('draws a bar with percentage and ETA on a terminal', async () => {
    // `script` gives the CLI a pseudo-terminal, as a user's shell would.
    const command = [process.execPath, BIN, 'import', input, '--overwrite', '--concurrency', '2']
      .map((a) => `'${a}'`)
      .join(' ');
    // script runs the command through $SHELL, which for a service account is nologin.
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, ...ctx.env(), COLUMNS: '160', SHELL: '/bin/sh' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      screen += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(screen).toMatch(/[█░]+ (reading|sending) \d+% \| \d+ rows \| \d+\/s \| ETA/);
    // Rows an earlier test of this file created: replayed, so counted as existing.
    expect(screen).toMatch(/Imported 60 rows .*: \d+ created(, \d+ existing \(already on the service, not created\))?, 0 failed/);
  });
});

describe('progress as data (library)', () => {
  it('importClients and exportClients report snapshots through onProgress, the last one final', async () => {
    const service = createServiceClient({
      baseUrl: ctx.sandbox.url,
      token: ctx.sandbox.token,
      signer: createSigner(createPrivateKey(ctx.sandbox.privateKeyPem!)),
      connections: 4,
    });
    try {
      const imported: ProgressSnapshot[] = [];
      const summary = await importClients({
        file: input,
        service,
        results: join(ctx.dir, 'library.results.csv'),
        overwrite: true,
        concurrency: 4,
        // The rows are on the service since the test before: without the person match they are
        // sent again (replayed), so the run lasts long enough for snapshots along the way.
        identity: { by: 'none' },
        onProgress: (snapshot) => imported.push(snapshot),
        progressIntervalMs: 50,
      });
      expect(imported.length).toBeGreaterThanOrEqual(2);
      const done = imported.map((snapshot) => snapshot.done);
      expect(done).toEqual([...done].sort((a, b) => a - b));
      // Rows finished, of a total known once the file is read; every outcome counted; the pace on its own.
      expect(imported.at(-1)).toMatchObject({
        done: 60,
        total: 60,
        fraction: 1,
        phase: 'sending',
        read: 60,
        counters: { created: summary.counts.created, failed: 0, invalid: 0, duplicate: 0, existing: 0, skipped: 0, not_attempted: 0 },
        pace: { inFlight: 0, limit: 4 },
      });
      // 1 (100%) only once every row has its outcome; an ETA of 0 only then too.
      for (const snapshot of imported.slice(0, -1)) {
        if (snapshot.done < 60) expect(snapshot.fraction ?? 0).toBeLessThan(1);
        if (snapshot.done < 60 && snapshot.etaMs !== undefined) expect(snapshot.etaMs).toBeGreaterThanOrEqual(1000);
      }
      // Along the way, `done` counts rows finished, never rows merely read: a bar does not sit at 100% for the whole send.
      for (const snapshot of imported) expect(snapshot.done).toBe(Object.values(snapshot.counters).reduce((a, b) => a + b, 0));
      expect(imported.every((snapshot) => snapshot.fraction === undefined || snapshot.fraction <= 1)).toBe(true);

      const exported: ProgressSnapshot[] = [];
      const sink = collector();
      const report = await exportClients({
        service,
        out: sink,
        pageSize: 10,
        onProgress: (snapshot) => exported.push(snapshot),
      });
      expect(exported.at(-1)).toEqual({ done: report.rows, counters: { pages: report.pages, prefetch: report.prefetch.current } });
      expect(report.out).toBe('stream');
    } finally {
      await service.close();
    }
  });
});
