/**
 * The row check's zod-free path for rows that pass against zod's schema alone: for every row,
 * good or bad, hand-made or read from the hostile fixtures, the two give the same result
 * (fields, issues and their wording) and report the same normalizations.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapColumns } from '../src/import/row/columns.js';
import { FIELDS } from '../src/import/fields.js';
import type { DateFormat } from '../src/import/row/normalize.js';
import { openRows } from '../src/import/read/index.js';
import { type RowRules, rowValidator } from '../src/import/row/validate-row.js';

const HEADERS = [...FIELDS];
const PLAN = mapColumns('t.csv', HEADERS, {});
const RULES: RowRules[] = [
  { dateFormat: 'YYYY-MM-DD', liquidityType: 'chain' },
  { dateFormat: 'DD/MM/YYYY', liquidityType: 'Chain' },
  { dateFormat: 'MM/DD/YYYY', liquidityType: 'other' },
];

/** Both paths over the same rows, each with its own notes: results and notes must match. */
function agree(rows: readonly (readonly string[])[], plan = PLAN, rules: RowRules = RULES[0]!): number {
  const noted = { fast: [] as string[][], zod: [] as string[][] };
  const fast = rowValidator(plan, rules, { changed: (...change) => noted.fast.push(change) });
  const zod = rowValidator(plan, rules, { changed: (...change) => noted.zod.push(change) }, { fastPath: false });
  let valid = 0;
  for (const row of rows) {
    const expected = zod(row);
    expect(fast(row), JSON.stringify(row)).toStrictEqual(expected);
    if (expected.ok) valid++;
  }
  expect(noted.fast).toStrictEqual(noted.zod);
  return valid;
}

const GOOD = ['Zoë Müller', 'zoe@example.com', 'Germany', 'Hauptstraße 1, Berlin', 'eur', '2024-03-01', 'Chain', 'own-key-1'];
const LONG = 'x'.repeat(1001);

/** Each field of GOOD replaced by values that pass, fail, or change on the way. */
const VARIANTS: Record<string, string[]> = {
  name: ['', ' ', LONG, 'x'.repeat(1000), 'A\u0007B', '#N/A', '#VALUE!', 'Err:502', 'Ezra', "'=SUM(A1)", ' Ana ', '"Best" Ltd', 'a\u00a0b'],
  email: ['', 'not-an-email', 'a@gmial.com', 'a@example.con', 'ANA@Example.COM', `${'a'.repeat(995)}@b.co`, 'a@b', ' a@example.com ', 'a\u0001@example.com'],
  country: ['', 'DE', 'deu', 'Atlantis', 'Germny', 'XX', 'gb', 'United Kingdom', '#REF!', 'D\u0000E', LONG],
  address: ['', '\t', 'Street\r\n1', 'x\u007fy', LONG, 'Łąkowa 2'],
  currency: ['', 'EUR', 'euro', 'XXX', 'ABC', 'US$', '#N/A', 'e\u0001r'],
  application_date: ['', '2024-02-30', '2024-02-29', '31/12/2024', '12/31/2024', '2024-3-1', '2024-03-01T10:00:00Z', 'yesterday', '#DIV/0!'],
  liquidity_type: ['', 'chain', 'CHAIN', 'other', '#N/A'],
  idempotency_key: ['', 'has space', 'k'.repeat(255), 'k'.repeat(256), '#REF!', 'ключ', 'Err:123', "'=x"],
};

function variants(): string[][] {
  const rows: string[][] = [GOOD, GOOD.slice(0, 4), [...GOOD, 'extra'], GOOD.slice(0, 7), []];
  HEADERS.forEach((field, column) => {
    for (const value of VARIANTS[field]!) rows.push(GOOD.map((cell, i) => (i === column ? value : cell)));
  });
  return rows;
}

/** Every record the reader gets out of the input fixtures (hostile, malformed, real exports). */
async function fixtureRows(): Promise<string[][]> {
  const root = join(import.meta.dirname, '..', 'fixtures', 'input');
  const files = ['', 'hostile', 'malformed'].flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((name) => /\.(csv|txt|xlsx)$/.test(name))
      .map((name) => join(root, dir, name)),
  );
  const rows: string[][] = [];
  for (const file of files) {
    try {
      const source = await openRows(file);
      rows.push(source.headers);
      try {
        for await (const batch of source.batches) for (const record of batch) rows.push(record.values);
      } finally {
        await source.close();
      }
    } catch {
      // A file the reader refuses still gave its rows before the fault.
    }
  }
  return rows;
}

describe('the fast path and zod agree', () => {
  it('on each field good, bad, changed or absent, under every rule set', () => {
    const rows = variants();
    for (const rules of RULES) agree(rows, PLAN, rules);
    // The table reaches both sides: rows that pass and rows that do not.
    expect(agree(rows)).toBeGreaterThan(20);
  });

  it('on every row of the input fixtures, in every column', async () => {
    const rows = await fixtureRows();
    expect(rows.length).toBeGreaterThan(50);
    // Each row as read, and shifted across the columns so every value meets every field's check.
    const shifted = rows.flatMap((row) => HEADERS.map((_, by) => HEADERS.map((__, i) => row[(i + by) % Math.max(1, row.length)] ?? '')));
    agree([...rows, ...shifted]);
    // And each hostile value in an otherwise good row.
    const values = [...new Set(rows.flat())];
    agree(values.flatMap((value) => HEADERS.map((_, column) => GOOD.map((cell, i) => (i === column ? value : cell)))));
  });

  it("on rows with a column plan of the file's own (some fields absent, columns reordered)", () => {
    const headers = ['E-mail', 'Notes', 'Full Name', 'Country', 'Street Address'];
    const plan = mapColumns('t.csv', headers, {});
    agree(
      [
        ['a@example.com', 'x', 'Ana', 'FR', 'Rue 1'],
        ['a@example.com', '', 'Ana', 'France', 'Rue 1'],
        ['a@example.com', '', '', 'France', 'Rue 1'],
        ['a@example.com', 'x', 'Ana', 'FR'],
      ],
      plan,
    );
  });

  it('on random rows built from the values above', () => {
    const pool = [...new Set([...GOOD, ...Object.values(VARIANTS).flat()])];
    const cell = fc.oneof(fc.constantFrom(...pool), fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }));
    const dateFormat = fc.constantFrom<DateFormat>('YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY');
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 7, maxLength: 9 }), { maxLength: 20 }), dateFormat, (rows, format) => {
        agree(rows, PLAN, { dateFormat: format, liquidityType: 'chain' });
      }),
      { numRuns: 300 },
    );
  });
});
