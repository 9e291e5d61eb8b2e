/** The soak script, briefly (npm run test:soak runs it for ~10 minutes on 20,000-row imports). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

it('imports under faults and kill -9 with no duplicate and no loss', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['scripts/soak.js', '--minutes', '0.25', '--rows', '300', '--seed', '7', '--json'],
    { cwd: ROOT, timeout: 150_000 },
  );
  const report = JSON.parse(stdout);
  expect(report).toMatchObject({ ok: true, duplicates: 0, losses: 0, accountingErrors: 0, unfinishedRuns: 0 });
  expect(report.runs).toBeGreaterThanOrEqual(1);
  expect(report.validRows).toBeGreaterThan(report.runs * 250);
}, 180_000);
