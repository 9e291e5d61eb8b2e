/**
 * The spreadsheet corpus end to end: each producer's file imports, into the sandbox that
 * holds source.csv's clients, as the same rows with the same idempotency keys — the service
 * replays every one (same key, same body) and creates nothing new. Protected: exit 2, nothing sent.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/index.js';
import { makeTempDir, readResults, runCliInProcess as runCli, sandboxEnv, writeKeyFile, startTestSandbox } from './helpers.js';
import { PRODUCERS, SHEETS } from './sheets.corpus.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let sandbox: Sandbox;
let keyFile: string;
/** row → [idempotency key, client id] of source.csv's import. */
let truth: Map<string, [string, string]>;

async function importFile(name: string): Promise<{ code: number | null; stderr: string; lines: string[][] }> {
  const results = join(temp.dir, `${name}.results.csv`);
  const run = await runCli(['import', join(SHEETS, name), '--results', results], { env: sandboxEnv(sandbox, keyFile) });
  return { code: run.code, stderr: run.stderr, lines: await readResults(results).catch(() => []) };
}

beforeAll(async () => {
  temp = await makeTempDir();
  sandbox = await startTestSandbox();
  keyFile = await writeKeyFile(temp.dir, sandbox.privateKeyPem);
  const { code, stderr, lines } = await importFile('source.csv');
  expect(code, stderr).toBe(0);
  truth = new Map(lines.map((line) => [line[0]!, [line[5]!, line[2]!]]));
  expect(truth.size).toBe(40);
});
afterAll(async () => {
  await sandbox.close();
  await temp.cleanup();
});

// BIFF5 from SheetJS holds ASCII only: its rows differ from source.csv by design (input.sheets.test.ts).
describe.each(PRODUCERS.filter(([name]) => !name.includes('biff5')))('%s', (name) => {
  it('imports as source.csv: same keys, the same clients, nothing new', async () => {
    const { code, stderr, lines } = await importFile(name);
    expect(code, stderr).toBe(0);
    // Every person is on the service since source.csv's import: matched, with its client's id.
    expect(lines.map((line) => line[1])).toEqual(Array(40).fill('existing'));
    expect(new Map(lines.map((line) => [line[0]!, [line[5]!, line[2]!]]))).toEqual(truth);
    expect(sandbox.store.size).toBe(40);
  });
});

describe('a report with a title block', () => {
  it('validate says which rows above the header it skipped, and the rows are valid', async () => {
    const run = await runCli([
      'validate',
      join(SHEETS, 'openpyxl-report.xlsx'),
      '--results',
      join(temp.dir, 'report.results.csv'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('header: row 4; rows 1, 2 above it skipped (not data)');
    expect(run.stderr).toMatch(/40 valid, 0 invalid/);
  });

  it('imports as source.csv', async () => {
    const { code, lines } = await importFile('openpyxl-report.xlsx');
    expect(code).toBe(0);
    expect(new Map(lines.map((line) => [line[0]!, [line[5]!, line[2]!]]))).toEqual(truth);
  });
});

describe('a password-protected workbook', () => {
  it.each(['protected.xlsx', 'protected.ods', 'protected.xls'])('%s: exit 2, the way out, nothing sent', async (name) => {
    const before = sandbox.stats.requests;
    const run = await runCli(['import', join(SHEETS, name), '--results', join(temp.dir, `${name}.r.csv`)], {
      env: sandboxEnv(sandbox, keyFile),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the workbook is password-protected: save an unprotected copy');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(sandbox.stats.requests).toBe(before);
  });
});

// LibreOffice's save of a German CRM export: a title above headers in another language, and
// three formulas that failed (#DIV/0!, #N/A, #NAME?; LibreOffice's Err:NNN in other cases).
describe.each(['libreoffice-errors.xlsx', 'libreoffice-errors.ods'])('%s', (name) => {
  it('without --map, the German headers under the title are read (import.languages has the rest)', async () => {
    const run = await runCli(['validate', join(SHEETS, name), '--results', join(temp.dir, `${name}.headers.csv`)]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('country ← "Land" (German), address ← "Anschrift" (German)');
    expect(run.stderr).toMatch(/header: row 3; rows? .* above it skipped/);
  });

  it('error cells make their rows invalid, never sent as text; the rest import', async () => {
    const before = { clients: sandbox.store.size };
    const results = join(temp.dir, `${name}.results.csv`);
    const args = ['import', join(SHEETS, name), '--map', 'country=Land', '--map', 'address=Anschrift', '--results', results];
    const run = await runCli(args, { env: sandboxEnv(sandbox, keyFile) });
    expect(run.code).toBe(1);
    // SheetJS's own console diagnostics (it reads .ods) do not reach the user.
    expect(run.stderr).not.toContain('number format');
    // Lines are written as rows finish: invalid rows before the answers come.
    const lines = (await readResults(results)).sort((a, b) => Number(a[0]) - Number(b[0]));
    // The .xlsx and the .ods hold the same two clients: the second file finds them on the service.
    const sent = name.endsWith('.xlsx') ? 'created' : 'existing';
    expect(lines.map((line) => [line[1], line[9]])).toEqual([
      [sent, ''],
      ['invalid', 'name: holds a spreadsheet error (#DIV/0!): the formula behind the cell failed; fix it in the workbook'],
      ['invalid', 'address: holds a spreadsheet error (#N/A): the formula behind the cell failed; fix it in the workbook'],
      ['invalid', 'name: holds a spreadsheet error (#NAME?): the formula behind the cell failed; fix it in the workbook'],
      [sent, ''],
    ]);
    expect(sandbox.store.size - before.clients).toBe(name.endsWith('.xlsx') ? 2 : 0);
  });
});
