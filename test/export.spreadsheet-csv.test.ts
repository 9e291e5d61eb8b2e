/**
 * CSV for spreadsheets when asked, and names that say the format: `--delimiter ;` is the
 * csv-semicolon format byte for byte, tab and `|` are plain CSV with another separator;
 * `--csv-dates spreadsheet` writes created_at as text LibreOffice (where installed) opens as a
 * date; `--out x.xls`, `.ods`, `.json` are refused with the formats written, before any request.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { parseCsv } from './export.helpers.js';
import { sheetCells } from './export.xlsx.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

const run = promisify(execFile);
const TO = ['--created-to', '2029-12-31'];
let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 60, seedRandom: 3 });
  sandbox.store.insert({ id: 'cli_pipe|semi;tab\t', name: 'A|B; C', created_at: '2025-01-31T18:00:05.123Z', bank_information: { account_number: '0085960978' } });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

async function exported(name: string, args: string[]): Promise<string> {
  const out = join(temp.dir, name);
  const result = await runCli(['export', '--out', out, '--quiet', ...TO, ...args], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return readFile(out, 'utf8');
}

describe('--delimiter', () => {
  it("';' is --format csv-semicolon, BOM included, byte for byte", async () => {
    const semicolon = await exported('semi.csv', ['--format', 'csv-semicolon']);
    expect(await exported('delim.csv', ['--delimiter', ';'])).toBe(semicolon);
    expect(semicolon.startsWith('\uFEFFid;name;')).toBe(true);
  });

  it('tab and | separate the cells; a cell holding the separator is quoted and reads back whole', async () => {
    for (const [word, delimiter] of [['tab', '\t'], ['|', '|']] as const) {
      const text = await exported(`d-${word === '|' ? 'pipe' : word}.csv`, ['--delimiter', word]);
      expect(text.startsWith(['id', 'name', 'email'].join(delimiter))).toBe(true);
      const records = parse(text, { columns: true, delimiter, relax_quotes: false }) as Record<string, string>[];
      expect(records).toHaveLength(61);
      expect(records.find((r) => r.id === 'cli_pipe|semi;tab\t')?.name).toBe('A|B; C');
    }
  });

  it('is refused for xlsx and JSONL, and against csv-semicolon, before any request', async () => {
    const requests = sandbox.stats.requests;
    const cases: [string[], RegExp][] = [
      [['--out', join(temp.dir, 'x.xlsx'), '--delimiter', ';'], /--delimiter applies to CSV only \(the format is xlsx\)/],
      [['--out', join(temp.dir, 'x.jsonl'), '--delimiter', 'tab'], /--delimiter applies to CSV only \(the format is jsonl\)/],
      [['--format', 'csv-semicolon', '--delimiter', 'tab'], /--format csv-semicolon writes ';'/],
      [['--delimiter', ':'], /--delimiter must be one of , ; tab \|/],
      [['--out', join(temp.dir, 'x.xlsx'), '--csv-dates', 'spreadsheet'], /--csv-dates applies to CSV only/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['export', ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(sandbox.stats.requests).toBe(requests);
  });
});

describe('--csv-dates spreadsheet', () => {
  it('writes created_at as 2025-01-31 18:00:05 (UTC), which LibreOffice opens as a date where installed', async () => {
    const text = await exported('dates.csv', ['--csv-dates', 'spreadsheet', '--columns', 'id,created_at,bank_account_number']);
    const records = parseCsv(text);
    expect(records.find((r) => r.id === 'cli_pipe|semi;tab\t')?.created_at).toBe('2025-01-31 18:00:05');
    for (const record of records) expect(record.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const office = await run('soffice', ['--version']).then(() => true, () => false);
    if (!office) {
      console.log('--csv-dates spreadsheet: LibreOffice is not installed, checked the text only');
      return;
    }
    const dir = join(temp.dir, 'lo');
    await mkdir(dir);
    const profile = `-env:UserInstallation=file://${join(temp.dir, 'lo-profile')}`;
    // What a user gets opening it with "Detect special numbers" on (LibreOffice's own default for dates).
    await run('soffice', [profile, '--headless', '--infilter=CSV:44,34,76,1,,0,false,true', '--convert-to', 'xlsx', '--outdir', dir, join(temp.dir, 'dates.csv')], { timeout: 120_000 });
    expect(await readdir(dir)).toEqual(['dates.xlsx']);
    const rows = await sheetCells(join(dir, 'dates.xlsx'));
    const row = rows.find((cells) => cells[0] === 'cli_pipe|semi;tab\t')!;
    expect(row[1]).toBeInstanceOf(Date);
    expect((row[1] as Date).toISOString()).toBe('2025-01-31T18:00:05.000Z');
    // LibreOffice starts slowly on a busy machine.
  }, 240_000);
  it('with --dates-in-timezone: the zone\'s wall-clock time, not UTC (18:00:05Z is 19:00:05 in Berlin in January)', async () => {
    const text = await exported('dates-berlin.csv', ['--csv-dates', 'spreadsheet', '--timezone', 'Europe/Berlin', '--dates-in-timezone', '--columns', 'id,created_at']);
    expect(parseCsv(text).find((r) => r.id === 'cli_pipe|semi;tab\t')?.created_at).toBe('2025-01-31 19:00:05');
  });
});

describe('names that say the format', () => {
  it.each([
    ['report.xls', /report\.xls: the export does not write \.xls files; it writes \.csv \(csv, csv-semicolon\), \.jsonl and \.xlsx \(every spreadsheet program opens \.xlsx\)/],
    ['report.ods', /does not write \.ods files/],
    ['report.json', /does not write \.json files.*name it \.jsonl/],
    ['report.json.gz', /does not write \.json files/],
    ['report.XLSM', /does not write \.xlsm files/],
  ])('--out %s is exit 2 before any request, listing what is written', async (name, message) => {
    const requests = sandbox.stats.requests;
    const result = await runCli(['export', '--out', join(temp.dir, name)], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/\[bad_option\]/);
    expect(sandbox.stats.requests).toBe(requests);
    expect(await readdir(temp.dir)).not.toContain(name);
  });
});
