/**
 * `ccs-bulk export` as a user runs it (the built CLI as a child process): stdout output is
 * clean CSV, the summary and exit codes are as documented, failures leave no file.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { expectedIds, idRange, parseCsv, startFakeService } from './export.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

const SEED = 2500;
let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 21 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

describe('ccs-bulk export', () => {
  it('--out - writes valid CSV on stdout, progress and the summary (JSON too) on stderr', async () => {
    const result = await runCli(['export', '--out', '-', '--json'], { env });
    expect(result.stderr).toContain('Exported 2500 clients');
    expect(result.code).toBe(0);
    const records = parseCsv(result.stdout);
    expect(new Set(records.map((r) => r.id))).toEqual(expectedIds(sandbox.store.all()));
    expect(records).toHaveLength(SEED);
    expect(result.stderr).toMatch(/pinned to the export's start/);
    const json = result.stderr.split('\n').find((line) => line.startsWith('{'));
    expect(JSON.parse(json!)).toMatchObject({
      out: 'stdout',
      rows: SEED,
      createdToPinned: true,
      pageBase: 0,
    });
  });

  it('--out FILE --file-mode 640 --json --quiet: a 0640 file, the JSON summary alone on stdout', async () => {
    const out = join(temp.dir, 'approved.csv');
    const args = [
      'export',
      '--out',
      out,
      '--status',
      'approved',
      '--created-to',
      '2025-12-31',
      '--file-mode',
      '640',
      '--json',
      '--quiet',
    ];
    const result = await runCli(args, { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    const expected = expectedIds(sandbox.store.all(), {
      status: ['approved'],
      toMs: Date.parse('2026-01-01') - 1,
    });
    expect(summary).toMatchObject({ out, rows: expected.size, createdToPinned: false });
    expect(summary.filters.createdTo).toBe('2025-12-31T23:59:59.999Z');
    expect((await stat(out)).mode & 0o777).toBe(0o640);
    expect(new Set(parseCsv(await readFile(out, 'utf8')).map((r) => r.id))).toEqual(expected);
  });

  it('an unknown column or status is exit 2, listing the valid ones, before any request', async () => {
    const requests = sandbox.stats.requests;
    const out = join(temp.dir, 'never.csv');
    const columns = await runCli(['export', '--out', out, '--columns', 'id,nme'], { env });
    expect(columns.code).toBe(2);
    expect(columns.stderr).toMatch(/unknown column "nme" \(did you mean name\?\); columns are id, name, email, country/);
    const status = await runCli(['export', '--out', out, '--status', 'aproved'], { env });
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(
      /valid values are pending_review, pending_documents, document_review, rejected, approved/,
    );
    expect(sandbox.stats.requests).toBe(requests);
    expect(await readdir(temp.dir)).not.toContain('never.csv');
  });

  it('a refused token is exit 3 and leaves no file', async () => {
    const dir = join(temp.dir, 'refused');
    const result = await runCli(['export', '--out', join(dir, '..', 'refused.csv')], {
      env: { ...env, CCS_TOKEN: 'lk_sandbox_wrong' },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/refused\.csv was not written/);
    expect(result.stderr).toMatch(/check the token/);
    expect(await readdir(temp.dir)).not.toContain('refused.csv');
  });

  it('a server that repeats its pages is exit 1 with a clear message, not a loop', async () => {
    const fake = await startFakeService((_page, size) => ({ ids: idRange('r', 0, size) }));
    const out = join(temp.dir, 'loop.csv');
    const result = await runCli(['export', '--out', out, '--page-size', '10'], {
      env: { CCS_BASE_URL: fake.url, CCS_TOKEN: 'lk_sandbox_x' },
      timeoutMs: 15_000,
    });
    await fake.close();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/same 10 clients as page 0.*instead of looping/);
    expect(await readdir(temp.dir)).not.toContain('loop.csv');
  });
});
