/**
 * Text as written, end to end (the CLI in-process, the real sandbox): a UTF-8 file with a few
 * bytes that are not UTF-8 sends its other rows exactly as written; each row holding such bytes
 * is `invalid`, named by column and byte, in the results and failed files, and never sent.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/cli.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { makeTempDir, ROOT, sandboxEnv, writeKeyFile } from './helpers.js';

const FIXTURES = join(ROOT, 'fixtures', 'input', 'encoding');
const NOT_UTF8 = 'is not valid UTF-8 (the file is UTF-8 elsewhere; fix the cell or save the file as UTF-8)';
/** The rows as typed (scripts/make-encoding-fixtures.js). */
const TYPED = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as { utf8Rows: string[][] };
const UTF8_NAMES = TYPED.utf8Rows.map((row) => row[0]!);

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let base: Sandbox;
let keyFile: string;
let runs = 0;

beforeAll(async () => {
  temp = await makeTempDir();
  base = await startSandbox();
  keyFile = await writeKeyFile(temp.dir, base.privateKeyPem);
});
afterAll(async () => {
  await base.close();
  await temp.cleanup();
});

interface Run {
  code: number;
  stderr: string;
  summary: { counts: Record<string, number>; source: Record<string, unknown> };
  /** Results lines: row, outcome, …, error_message (index 9), then the row's values. */
  results: string[][];
  failed: string[][];
  sent: { name: string; address: string }[];
  creates: number;
}

/** `ccs-bulk <command> <fixture> --json` in this process, against a fresh sandbox. */
async function run(command: 'import' | 'validate', fixture: string, ...flags: string[]): Promise<Run> {
  const sandbox = await startSandbox({ publicKeyPem: base.publicKeyPem!, token: base.token });
  try {
    const out = join(temp.dir, `${++runs}`);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const text = { stdout: '', stderr: '' };
    stdout.on('data', (chunk: Buffer) => (text.stdout += chunk.toString()));
    stderr.on('data', (chunk: Buffer) => (text.stderr += chunk.toString()));
    const argv = [command, join(FIXTURES, fixture), '--results', `${out}.results.csv`, '--failed', `${out}.failed.csv`, '--json', ...flags];
    const code = await runCli(argv, sandboxEnv(sandbox, keyFile), { stdout, stderr });
    // The failed file keeps the input's delimiter and BOM (it re-imports as it is).
    const csv = async (path: string, delimiter = ',') =>
      parse(await readFile(path), { relax_column_count: true, bom: true, delimiter }) as string[][];
    return {
      code,
      stderr: text.stderr,
      summary: JSON.parse(text.stdout),
      results: (await csv(`${out}.results.csv`)).slice(1),
      failed: await csv(`${out}.failed.csv`, fixture.includes('semicolon') ? ';' : ','),
      sent: sandbox.store.all().map(({ name, address }) => ({ name, address })),
      creates: sandbox.stats.creates,
    };
  } finally {
    await sandbox.close();
  }
}

/** Every data row from 1 to `rows` has exactly one line in the results file. */
function expectEveryRow(results: string[][], rows: number): void {
  expect(results.map((line) => Number(line[0])).sort((a, b) => a - b)).toEqual(Array.from({ length: rows }, (_, i) => i + 1));
}

describe('a UTF-8 file with a few invalid bytes', () => {
  it('Excel (BOM, a cell pasted as windows-1252): the other rows go out as written, that row is invalid', async () => {
    const result = await run('import', 'excel-bom-pasted-cp1252.csv');
    expect(result.code, result.stderr).toBe(1);
    expect(result.summary.counts).toMatchObject({ created: 7, invalid: 1, failed: 0 });
    expect(result.summary.source).toMatchObject({ encoding: 'utf-8', encodingSource: 'bom', rowsWithInvalidBytes: 1 });
    expect(result.sent.map((client) => client.name).sort()).toEqual(UTF8_NAMES.filter((name) => name !== 'Claire Martin').sort());
    expect(result.sent).toContainEqual({ name: 'José Müller-Øster', address: 'Königstraße 12, Stuttgart' });
    expect(result.creates).toBe(7);
    expectEveryRow(result.results, 8);
    const invalid = result.results.find((line) => line[1] === 'invalid')!;
    expect(invalid.slice(0, 2)).toEqual(['4', 'invalid']);
    expect(invalid[9]).toBe(`address: byte 0xE9 ${NOT_UTF8}`);
    // The row as read: U+FFFD where the byte was (the message names the byte).
    expect(invalid.slice(11)).toEqual(['Claire Martin', 'claire@example.fr', 'FR', 'Avenue R\uFFFDaumur 9, Paris', 'EUR']);
    // The failed file: the row to fix (its idempotency_key cell empty: it was never sent), then why.
    expect(result.failed).toEqual([
      ['name', 'email', 'country', 'address', 'currency', 'idempotency_key', 'error'],
      ['Claire Martin', 'claire@example.fr', 'FR', 'Avenue R\uFFFDaumur 9, Paris', 'EUR', '', `excel-bom-pasted-cp1252.csv line 5 (data row 4): address: byte 0xE9 ${NOT_UTF8}`],
    ]);
    expect(result.stderr).toContain('(csv, utf-8 [bom], delimiter "," [sniffed])');
    expect(result.stderr).toContain('  encoding: utf-8 [bom; 1 row with invalid bytes]: those rows are invalid, not sent');
  });

  it('LibreOffice (";", no BOM, a stray byte): detected as UTF-8, the same with --encoding utf-8', async () => {
    for (const flags of [[], ['--encoding', 'utf-8']]) {
      const result = await run('import', 'libreoffice-semicolon-stray-byte.csv', ...flags);
      expect(result.code, result.stderr).toBe(1);
      expect(result.summary.counts).toMatchObject({ created: 7, invalid: 1 });
      expect(result.sent.map((client) => client.name).sort()).toEqual(UTF8_NAMES.filter((name) => name !== 'Renée Dubois').sort());
      const invalid = result.results.filter((line) => line[1] === 'invalid');
      expect(invalid.map((line) => [line[0], line[9]])).toEqual([['5', `address: byte 0xEE ${NOT_UTF8}`]]);
      expect(result.stderr).toContain(flags.length === 0 ? 'utf-8 [detected], delimiter ";"' : 'utf-8 [option], delimiter ";"');
    }
  });

  it('concatenation: the appended windows-1252 rows with accents are all invalid, none sent as mojibake', async () => {
    const result = await run('import', 'concatenated-utf8-then-cp1252.csv');
    expect(result.code, result.stderr).toBe(1);
    expect(result.summary.counts).toMatchObject({ created: 10, invalid: 6 });
    expect(result.sent.map((client) => client.name).sort()).toEqual([...UTF8_NAMES, 'Bob Smith', 'Alice Jones'].sort());
    expect(result.creates).toBe(10);
    for (const client of result.sent) expect(`${client.name} ${client.address}`).not.toMatch(/[\uFFFDÃÂ]/);
    expectEveryRow(result.results, 16);
    const invalid = result.results.filter((line) => line[1] === 'invalid').map((line) => [line[0], line[9]]);
    expect(invalid).toEqual([
      ['9', `name: byte 0xC9 ${NOT_UTF8}; address: byte 0xC9 ${NOT_UTF8}`],
      ['10', `name: bytes 0xE7, 0xE8 ${NOT_UTF8.replace('is', 'are')}; address: byte 0x92 ${NOT_UTF8}`],
      ['11', `name: bytes 0xFC, 0xDF ${NOT_UTF8.replace('is', 'are')}; address: bytes 0xDF, 0xFC ${NOT_UTF8.replace('is', 'are')}`],
      ['13', `name: byte 0xE8 ${NOT_UTF8}`],
      ['14', `name: bytes 0xC5, 0xD6 ${NOT_UTF8.replace('is', 'are')}; address: byte 0xF6 ${NOT_UTF8}`],
      ['15', `name: bytes 0xE9, 0x93, 0xE8, 0x94 ${NOT_UTF8.replace('is', 'are')}`],
    ]);
    expect(result.stderr).toContain('encoding: utf-8 [detected; 6 rows with invalid bytes]');
  });

  it('validate says the same, and sends nothing', async () => {
    const result = await run('validate', 'concatenated-utf8-then-cp1252.csv');
    expect(result.code, result.stderr).toBe(1);
    expect(result.summary.counts).toMatchObject({ valid: 10, invalid: 6 });
    expect(result.creates).toBe(0);
    expect(result.stderr).toContain('(csv, utf-8 [detected], delimiter "," [sniffed])');
    expect(result.stderr).toContain('encoding: utf-8 [detected; 6 rows with invalid bytes]');
  });
});

describe('files in one encoding', () => {
  it('pure windows-1252: detected as such, said why, every name sent as written', async () => {
    const result = await run('import', 'pure-cp1252.csv');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('(csv, windows-1252 [detected: no UTF-8 sequences], delimiter "," [sniffed])');
    expect(result.sent.map((client) => client.name)).toEqual(
      expect.arrayContaining(['José Müller-Øster', 'Zoë Œuvray', 'François Lefèvre', 'Café “Crème” Ltd', 'Åsa Öberg']),
    );
    expect(result.sent).toHaveLength(11);
    expect(result.sent).toContainEqual({ name: 'Zoë Œuvray', address: '12, rue de l’Église, Paris' });
  });

  it('pure UTF-8: unchanged', async () => {
    const result = await run('import', 'pure-utf8.csv');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('(csv, utf-8 [detected], delimiter "," [sniffed])');
    expect(result.stderr).not.toContain('invalid bytes');
    expect(result.sent.map((client) => client.name).sort()).toEqual([...UTF8_NAMES].sort());
  });
});
