/**
 * `export --format csv-semicolon`: the CSV a spreadsheet user in Germany, France or Spain opens
 * in columns — `;` between cells (their Excel's list separator) and a UTF-8 BOM (without it,
 * Excel reads the file in the machine's legacy code page and breaks the accents). Named in
 * --help; read back by ccs-bulk's own reader as `;` and UTF-8.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRows } from '../src/import/read/index.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false });
  sandbox.store.insert({ name: 'Müller; Söhne GmbH', email: 'mueller@example.de', address: 'Straße 1, München', country: 'DE', currency: 'EUR' });
  sandbox.store.insert({ name: 'Œuvre, Dupont & Cie', email: 'dupont@example.fr', address: '=1+2', country: 'FR', currency: 'EUR' });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

describe('export --format csv-semicolon', () => {
  it('writes a UTF-8 BOM, ; between cells, a cell holding ; quoted, formulas escaped', async () => {
    const out = join(temp.dir, 'check.csv');
    const run = await runCli(['export', '--out', out, '--format', 'csv-semicolon', '--columns', 'name,email,address,country', '--quiet'], { env });
    expect(run.code, run.stderr).toBe(0);
    const bytes = await readFile(out);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.toString('utf8').slice(1).split('\r\n');
    expect(lines[0]).toBe('name;email;address;country');
    // A comma is quoted too (csvCell quotes every common separator, whatever the file's own).
    expect(lines).toContain('"Müller; Söhne GmbH";mueller@example.de;"Straße 1, München";DE');
    expect(lines).toContain(`"Œuvre, Dupont & Cie";dupont@example.fr;'=1+2;FR`);
  });

  it('reads back as it was written: ; detected, UTF-8 from the BOM, every accent whole', async () => {
    const out = join(temp.dir, 'back.csv');
    await runCli(['export', '--out', out, '--format', 'csv-semicolon', '--quiet'], { env });
    const source = await openRows(out, {});
    const rows = [];
    for await (const batch of source.batches) rows.push(...batch);
    await source.close();
    expect(source.info).toMatchObject({ delimiter: ';', encoding: 'utf-8', encodingSource: 'bom' });
    const name = source.headers.indexOf('name');
    expect(rows.map((row) => row.values[name]).sort()).toEqual(['Müller; Söhne GmbH', 'Œuvre, Dupont & Cie']);
  });

  it('is named in export --help', async () => {
    const help = await runCli(['export', '--help']);
    expect(help.stdout).toContain('csv-semicolon');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain("csv-semicolon: ';' and a UTF-8 BOM, for Excel set to German, French, Spanish");
  });
});
