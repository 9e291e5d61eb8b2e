/** The soak script, briefly (npm run test:soak runs it for ~10 minutes on 20,000-row imports). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { makeTempDir, ROOT, writeKeyFile } from './helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

it('imports under faults and kill -9 with no duplicate and no loss', async () => {
  // The run's key pair rather than one the soak's sandbox would make; short fault phases, so a
  // 100-row import meets several; its first CLI run killed once it has recorded a row.
  const keyFile = await writeKeyFile(temp.dir, inject('signingKeys').privateKeyPem);
  const args = ['--minutes', '0.02', '--rows', '100', '--seed', '7', '--phase-seconds', '0.3:0.8', '--kill-first', '--key-file', keyFile];
  const { stdout } = await promisify(execFile)(process.execPath, ['scripts/soak.js', ...args, '--json'], { cwd: ROOT, timeout: 150_000 });
  const report = JSON.parse(stdout);
  expect(report).toMatchObject({ ok: true, duplicates: 0, losses: 0, accountingErrors: 0, unfinishedRuns: 0 });
  expect(report.runs).toBeGreaterThanOrEqual(1);
  expect(report.validRows).toBeGreaterThan(report.runs * 90);
  // Killed mid-import and resumed to the end, under faults that reached the service or the relay.
  expect(report.killsMidRun).toBeGreaterThanOrEqual(1);
  expect(report.attempts).toBeGreaterThan(report.kills);
  const { http5xx, http429, cutAfterCreate, dropped, outageConnectionsRefused } = report.faults;
  expect(http5xx + http429 + cutAfterCreate + dropped + outageConnectionsRefused).toBeGreaterThan(0);
}, 180_000);
