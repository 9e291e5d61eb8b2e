/**
 * What openpyxl (what pandas reads workbooks with) made of an xlsx report, pinned without
 * Python: fixtures/reports/ holds a report, the CSV export of the same clients and openpyxl's
 * read-back (scripts/make-report-fixtures.js, scripts/check-xlsx-report.py). The read-back
 * must equal the CSV, and today's exporter must still write that very sheet.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { asInWorkbook, zipParts } from './export.xlsx.helpers.js';
import { makeTempDir, ROOT, runCliInProcess as runCli } from './helpers.js';

const DIR = join(ROOT, 'fixtures', 'reports');

interface Readback {
  reader: string;
  sheet: string;
  frozen: string;
  autofilter: string;
  headerBold: boolean;
  rows: ({ s: string } | { d: string } | { n: number } | null)[][];
}

let readback: Readback;
let records: string[][];

beforeAll(async () => {
  readback = JSON.parse(await readFile(join(DIR, 'clients.openpyxl.json'), 'utf8')) as Readback;
  records = parse(await readFile(join(DIR, 'clients.csv'), 'utf8'), { relax_quotes: false }) as string[][];
});

describe('the xlsx report as openpyxl reads it', () => {
  it('holds exactly what the CSV export holds, typed, under a bold frozen filtered header', () => {
    expect(readback).toMatchObject({ sheet: 'clients', frozen: 'A2', headerBold: true });
    expect(readback.reader).toMatch(/^openpyxl \d/);
    expect(readback.autofilter).toBe(`A1:N${records.length}`);
    expect(readback.rows).toHaveLength(records.length);
    const header = records[0]!;
    expect(readback.rows[0]).toEqual(header.map((name) => ({ s: name })));
    for (let r = 1; r < records.length; r++) {
      const expected = records[r]!.map((value, c) => {
        if (value === '') return null;
        if (header[c] === 'created_at') return { d: value };
        if (header[c] === 'documents_count') return { n: Number(value) };
        return { s: asInWorkbook(value) };
      });
      expect(readback.rows[r], `row ${r + 1}`).toEqual(expected);
    }
    const kinds = readback.rows.slice(1).flat().map((cell) => (cell === null ? 'empty' : Object.keys(cell)[0]));
    const count = (kind: string) => kinds.filter((k) => k === kind).length;
    expect([count('d'), count('n')]).toEqual([records.length - 1, records.length - 1]);
  });
});

describe('fixtures/reports/clients.xlsx', () => {
  let sandbox: Sandbox;
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  let setup: { seed: number; seedRandom: number; exportArgs: string[]; extraClients: object[] };
  beforeAll(async () => {
    setup = JSON.parse(await readFile(join(DIR, 'report-sandbox.json'), 'utf8')) as typeof setup;
    sandbox = await startSandbox({ seed: setup.seed, seedRandom: setup.seedRandom, verifySignatures: false });
    for (const client of setup.extraClients) sandbox.store.insert(client);
    temp = await makeTempDir();
  });
  afterAll(async () => {
    await sandbox?.close();
    await temp?.cleanup();
  });

  it('is what the exporter writes today for the same clients (else regenerate the fixtures)', async () => {
    const env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
    const out = join(temp.dir, 'clients.xlsx');
    const csv = join(temp.dir, 'clients.csv');
    // The summary sheet says when it was made: the fixture is the workbook without it.
    expect((await runCli(['export', '--out', out, '--summary-sheet', 'none', ...setup.exportArgs], { env })).code).toBe(0);
    const csvArgs = ['export', '--out', csv, '--no-escape-formulas', ...setup.exportArgs];
    expect((await runCli(csvArgs, { env })).code).toBe(0);
    const [fresh, committed] = await Promise.all([
      readFile(out).then(zipParts),
      readFile(join(DIR, 'clients.xlsx')).then(zipParts),
    ]);
    expect(fresh).toEqual(committed);
    expect(await readFile(csv, 'utf8')).toBe(await readFile(join(DIR, 'clients.csv'), 'utf8'));
  });
});
