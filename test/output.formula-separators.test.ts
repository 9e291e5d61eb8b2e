/**
 * A spreadsheet splits a CSV on the user's list separator, not the file's: Excel with `;` (much
 * of Europe) reads a comma file's quoted `"Ann;=cmd()"` mid-line as `"Ann` and `=cmd()`, since
 * a quote opens a field only at its start. So no file ccs-bulk writes for people may hold a
 * cell, under any of `;` `,` or tab, that starts with a formula trigger: each file is read here
 * as such a spreadsheet would (quotes literal mid-field) with all three, and as ccs-bulk reads
 * it back (its own delimiter, escape undone), where every value must come back as it was.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { unescapeFormula } from '../src/import/row/normalize.js';
import { runCliInProcess as runCli, useSandbox } from './helpers.js';

const ctx = useSandbox();

/** Values a spreadsheet would run as formulas once split on some separator or line break. */
const PAYLOADS = [
  "Ann;=cmd|' /C calc'!A0;x",
  "Bob,=cmd|' /C calc'!A0,x",
  'Cyd;+SUM(1+1);x',
  'Dee,-2+3,x',
  'Eve;@SUM(A1),x',
  'Fay;"=HYPERLINK(""http://example.com"")";x',
  "Gil;'=already escaped;x",
  '=leading;=and inside',
];
/** The same, with a tab or line break before the trigger: valid only where text may hold one. */
const CONTROL_PAYLOADS = ["Hal\t=cmd|' /C calc'!A0\tx", 'Ida\n+SUM(1)\nx', 'Jo\r\n-1+2\r\nx', 'Kai\r@SUM(A1)\rx'];

const TRIGGER = /^[=+\-@]/;
const SEPARATORS = [';', ',', '\t'] as const;

/**
 * Every cell that would start with a trigger when `text` is opened with `delimiter` as its list
 * separator: quotes count only where a field starts (relax_quotes), as in Excel and LibreOffice.
 */
function triggeredCells(text: string, delimiter: string): string[] {
  const records = parse(text, { delimiter, bom: true, relax_quotes: true, relax_column_count: true }) as string[][];
  return records.flat().filter((cell) => TRIGGER.test(cell));
}

/** The file read with each separator: no cell of any reading starts with a trigger. */
function expectNoFormulaUnderAnySeparator(text: string): void {
  for (const delimiter of SEPARATORS) {
    expect({ delimiter, cells: triggeredCells(text, delimiter) }).toEqual({ delimiter, cells: [] });
  }
}

/** The file as ccs-bulk reads it: its own delimiter, the formula escape undone. */
function readOwn(text: string, delimiter: string): string[][] {
  const records = parse(text, { delimiter, bom: true, relax_column_count: true }) as string[][];
  return records.map((record) => record.map(unescapeFormula));
}

const HEADER = ['name', 'email', 'country', 'address', 'currency', 'notes'];

/** One row per payload: valid ones, then the same names with an e-mail address that is not one. */
function rows(): string[][] {
  const valid = PAYLOADS.map((payload, i) => [payload, `valid${i}@example.com`, 'DE', payload, 'EUR', CONTROL_PAYLOADS[i % 4]!]);
  const invalid = PAYLOADS.map((payload, i) => [payload, `broken ${i}`, 'DE', payload, 'EUR', CONTROL_PAYLOADS[i % 4]!]);
  return [...valid, ...invalid];
}

describe('files a spreadsheet may open with another list separator', () => {
  it('a results file and a --failed file from a comma CSV', async () => {
    const input = join(ctx.dir, 'comma.csv');
    const results = join(ctx.dir, 'comma.results.csv');
    const failed = join(ctx.dir, 'comma.failed.csv');
    const all = rows();
    await writeFile(input, stringify([HEADER, ...all]));
    const run = await runCli(['import', input, '--results', results, '--failed', failed, '--quiet'], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(1);

    const resultsText = await readFile(results, 'utf8');
    expectNoFormulaUnderAnySeparator(resultsText);
    const lines = readOwn(resultsText, ',').slice(1);
    expect(lines.map((line) => line[1])).toEqual([...PAYLOADS.map(() => 'created'), ...PAYLOADS.map(() => 'invalid')]);
    expect(lines.map((line) => line.slice(11))).toEqual(all);

    const failedText = await readFile(failed, 'utf8');
    expectNoFormulaUnderAnySeparator(failedText);
    expect(readOwn(failedText, ',').slice(1).map((record) => record.slice(0, HEADER.length))).toEqual(all.slice(PAYLOADS.length));
  });

  it('a --failed file that keeps a `;` input, fixed and imported again as it is', async () => {
    const input = join(ctx.dir, 'semicolon.csv');
    const failed = join(ctx.dir, 'semicolon.failed.csv');
    const invalid = rows().slice(PAYLOADS.length);
    await writeFile(input, stringify([HEADER, ...invalid], { delimiter: ';' }));
    const run = await runCli(['import', input, '--failed', failed, '--quiet'], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(1);

    const failedText = await readFile(failed, 'utf8');
    expect(failedText.split('\n')[0]).toBe('name;email;country;address;currency;notes;idempotency_key;error');
    expectNoFormulaUnderAnySeparator(failedText);
    const records = readOwn(failedText, ';').slice(1);
    expect(records.map((record) => record.slice(0, HEADER.length))).toEqual(invalid);

    // Fixed as a user would (the e-mail cells only), then imported: every name arrives as typed.
    const fixed = failedText.replace(/broken (\d+)/g, 'fixed$1@example.com');
    await writeFile(failed, fixed);
    const again = await runCli(['import', failed, '--quiet'], { env: ctx.env() });
    expect(again.code, again.stderr).toBe(0);
    const names = ctx.sandbox.store.all().filter((client) => /^fixed\d+@/.test(client.email)).map((client) => client.name);
    expect(names.sort()).toEqual([...PAYLOADS].sort());
  });

  it('an export, each value read back as it was', async () => {
    const ids = PAYLOADS.map((name, i) => {
      const address = `${name}${CONTROL_PAYLOADS[i % 4]!}`;
      return ctx.sandbox.store.insert({ name, email: `export${i}@example.com`, country: 'FR', address, currency: 'EUR' }).id;
    });
    const out = join(ctx.dir, 'export.csv');
    const run = await runCli(['export', '--out', out, '--quiet'], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);

    const text = await readFile(out, 'utf8');
    expectNoFormulaUnderAnySeparator(text);
    const [header, ...records] = readOwn(text, ',');
    const column = (name: string) => header!.indexOf(name);
    const exported = new Map(records.map((record) => [record[column('id')], record]));
    for (const id of ids) {
      const client = ctx.sandbox.store.get(id)!;
      expect(exported.get(id)?.[column('name')]).toBe(client.name);
      expect(exported.get(id)?.[column('address')]).toBe(client.address);
    }
  });
});
