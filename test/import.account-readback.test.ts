/**
 * The account's read-back of the results file: each record's row and outcome, found in one
 * buffer refilled in place. Records that cross a refill, quoted cells holding newlines and
 * quotes, and one record longer than the buffer must each count once, as a full CSV parse
 * counts them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountForRun, RowLedger } from '../src/import/record/account.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccs-account-readback-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A results file of `rows` outcome lines after `header`, with messages of every awkward shape. */
function resultsText(rows: number, message: (row: number) => string): string {
  return stringify(Array.from({ length: rows }, (_, i) => [i + 1, i % 3 === 0 ? 'failed' : 'valid', 'email', message(i + 1), '', `ck_${i + 1}`]));
}

async function account(name: string, header: string, body: string, rows: number) {
  const file = join(dir, name);
  await writeFile(file, header + body);
  const ledger = new RowLedger();
  for (let row = 1; row <= rows; row++) ledger.read(row, 'outcome');
  return accountForRun({ ledger, results: file, resultsStart: Buffer.byteLength(header), readerDone: true, bytesRead: 1, sizeBytes: 1 });
}

describe('reading the results file back', () => {
  it('counts every record once: quoted newlines and quotes, records across refills, one longer than the buffer', async () => {
    const rows = 20_000;
    const awkward = (row: number) =>
      row === 7_777 ? `long ${'x"\n'.repeat(300_000)}` : row % 5 === 0 ? `a "quoted" word,\nand a second line ${row}` : row % 7 === 0 ? `é ${row}` : '';
    const header = 'row,outcome,field,message,id,key\n';
    const body = resultsText(rows, awkward);
    // The reference: a full parse of the same lines.
    const parsed = parse(body, { relax_column_count: true }) as string[][];
    expect(parsed).toHaveLength(rows);
    expect(Buffer.byteLength(body)).toBeGreaterThan(1_000_000);

    const result = await account('awkward.csv', header, body, rows);
    expect(result).toMatchObject({ complete: true, outcomesRecorded: rows, rowsRead: rows });
  });

  it('finds the row with no outcome, and a row with two, wherever the buffer was refilled', async () => {
    const rows = 30_000;
    const header = 'row,outcome\n';
    const lines = resultsText(rows, (row) => `message ${'m'.repeat(row % 50)}`).split('\n');
    expect(await account('whole.csv', header, lines.join('\n'), rows)).toMatchObject({ complete: true, outcomesRecorded: rows });
    const missing = [...lines.slice(0, 24_999), ...lines.slice(25_000)].join('\n');
    expect(await account('missing.csv', header, missing, rows)).toMatchObject({ complete: false, firstMissing: 25_000 });
    const twice = [...lines.slice(0, 12_346), lines[12_345], ...lines.slice(12_346)].join('\n');
    expect(await account('twice.csv', header, twice, rows)).toMatchObject({
      complete: false,
      firstMissing: 12_346,
      problem: 'row 12346 has 2 outcomes in the results file',
    });
  });
});
