/**
 * No column is dropped quietly: an unmapped column that looks like an optional field (currency
 * or date values, or a header one typo from a field's name) stops an import before anything is
 * sent, naming both ways on (--map to send it, --ignore-column to drop it); validate warns about
 * it and keeps its exit code; other unmapped columns are listed as ignored, as before. Also the
 * flags beside it: --identity, --held-cache and --check-service as the command line and the
 * config file give them.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { openRows, peekRows, type RawRecord } from '../src/import/read/index.js';
import { CURRENCY_SIGNS, looksLikeCurrency, looksLikeDate } from '../src/import/row/lookalike.js';
import { readResults, runCliInProcess as runCli, useSandbox } from './helpers.js';

const ctx = useSandbox();
let files = 0;

async function csv(rows: string[][], name = `in-${++files}.csv`): Promise<string> {
  const path = join(ctx.dir, name);
  await writeFile(path, stringify(rows));
  return path;
}

/** A German team's list: the required columns under German headers, a currency and a date column under headers no language table knows, two others. */
const GERMAN = [
  ['Name', 'E-Mail', 'Land', 'Anschrift', 'Zahlwährung', 'Eingangsdatum', 'Kundennr.', 'Bemerkung'],
  ['Anna Schmidt', 'anna@example.de', 'DE', 'Hauptstr. 1, Berlin', 'EUR', '15.03.2024', '10023', 'ruft zurück'],
  ['Jean Dupont', 'jean@example.fr', 'FR', '2 rue Haute, Lyon', '€', '02.04.2024', '10024', ''],
  ['Mary Major', 'mary@example.com', 'US', '5 Main St, Boston', 'USD', '28.02.2024', '00017', 'VIP'],
];
const REQUIRED_MAP = ['--map', 'country=Land', '--map', 'address=Anschrift'];

/** Each test its own people: the sandbox is shared by the file. */
function people(tag: string): string[][] {
  return GERMAN.map((row, i) => (i === 0 ? row : row.map((cell, c) => (c === 1 ? cell.replace('@', `.${tag}@`) : cell))));
}

describe('import stops at an unmapped column that looks like a field', () => {
  it('names both columns, what they look like and both fixes; sends nothing and leaves no results file', async () => {
    const file = await csv(people('stop'));
    const [clients, requests] = [ctx.sandbox.store.size, ctx.sandbox.stats.requests];
    const failed = join(ctx.dir, 'stop-fix-me.csv');
    const run = await runCli(['import', file, ...REQUIRED_MAP, '--failed', failed], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('[unmapped_field_column]');
    expect(run.stderr).toContain('column 5 "Zahlwährung" looks like currency: 3 of 3 values are currencies (e.g. "EUR")');
    expect(run.stderr).toContain('column 6 "Eingangsdatum" looks like application_date: 3 of 3 values are dates (e.g. "15.03.2024")');
    expect(run.stderr).toContain('2 columns are not mapped to any field but look like one; nothing was sent (the import would drop them)');
    expect(run.stderr).toContain("To send them: --map 'currency=Zahlwährung' --map application_date=Eingangsdatum;");
    expect(run.stderr).toContain("to drop them on purpose: --ignore-column 'Zahlwährung' --ignore-column Eingangsdatum");
    expect(run.stderr).not.toContain('Kundennr.');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect([ctx.sandbox.store.size, ctx.sandbox.stats.requests]).toEqual([clients, requests]);
    // Refused before any row: the next run needs no --overwrite.
    expect(existsSync(`${file}.results.csv`)).toBe(false);
    expect(existsSync(`${file}.results.csv.meta.json`)).toBe(false);
    expect(existsSync(failed)).toBe(false);
  });

  it('--ignore-column drops them on purpose: the run goes on, the others listed as ignored; the re-import command keeps it', async () => {
    const rows = people('ignore');
    rows.push(['Bad Mail', 'not-an-email', 'DE', 'Weg 3, Köln', 'EUR', '01.01.2024', '10025', '']);
    const file = await csv(rows);
    const failed = join(ctx.dir, 'ignore-fix-me.csv');
    // The refused run above left nothing behind: this one runs without --overwrite.
    await runCli(['import', file, ...REQUIRED_MAP], { env: ctx.env() });
    const before = ctx.sandbox.store.size;
    const run = await runCli(
      ['import', file, ...REQUIRED_MAP, '--ignore-column', 'Zahlwährung', '--ignore-column', 'eingangsdatum', '--failed', failed],
      { env: ctx.env() },
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('ignored columns: "Zahlwährung", "Eingangsdatum", "Kundennr.", "Bemerkung"');
    expect(run.stderr).not.toContain('warning');
    expect(ctx.sandbox.store.size - before).toBe(3);
    expect(run.stderr).toContain("--ignore-column 'Zahlwährung' --ignore-column eingangsdatum");
    const sent = ctx.sandbox.store.all().filter((client) => client.email.includes('.ignore@'));
    expect(sent.map((client) => client.currency)).toEqual([null, null, null]);
    // A --resume that forgets --ignore-column is refused too, and keeps the rows its results file holds.
    const resumed = await runCli(['import', file, ...REQUIRED_MAP, '--resume'], { env: ctx.env() });
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stderr).toContain('[unmapped_field_column]');
    const kept = await readResults(`${file}.results.csv`);
    expect(kept.filter((line) => line[1] === 'created')).toHaveLength(3);
  });

  it('--map sends them: the currencies go out as codes (the sign € too, counted as a normalization)', async () => {
    const file = await csv(people('mapped'));
    const run = await runCli(
      ['import', file, ...REQUIRED_MAP, '--map', 'currency=Zahlwährung', '--map', 'application_date=Eingangsdatum', '--date-format', 'DD/MM/YYYY'],
      { env: ctx.env() },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('currency ← "Zahlwährung", application_date ← "Eingangsdatum"');
    expect(run.stderr).toContain('currency "€" → "EUR" ×1');
    const sent = ctx.sandbox.store.all().filter((client) => client.email.includes('.mapped@'));
    expect(sent.map((client) => client.currency).sort()).toEqual(['EUR', 'EUR', 'USD']);
    const lines = await readResults(`${file}.results.csv`);
    expect(lines.map((line) => line[1]).sort()).toEqual(['created', 'created', 'created']);
  });

  it('a header one typo from a field\'s name is flagged, whatever its values', async () => {
    const file = await csv([
      ['Name', 'Email', 'Country', 'Address', 'Curency', 'Liquidty'],
      ['A', 'a.typo@example.com', 'DE', 'Street 1', 'see contract', 'chain'],
    ]);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('column 5 "Curency" looks like currency: its header is close to "currency" (e.g. "see contract")');
    expect(run.stderr).toContain('column 6 "Liquidty" looks like liquidity_type: its header is close to "liquidity"');
  });

  it('numbers and free text under unknown headers are not lookalikes: listed as ignored, as before', async () => {
    const file = await csv(people('plain').map((row) => row.filter((_, c) => c !== 4 && c !== 5)));
    const run = await runCli(['import', file, ...REQUIRED_MAP], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('ignored columns: "Kundennr.", "Bemerkung"');
    expect(run.stderr).not.toContain('warning');
  });

  it("ccs-bulk's own export columns (created_at, status…) are the service's: an export imports elsewhere as it is", async () => {
    const file = await csv([
      ['id', 'name', 'email', 'country', 'address', 'status', 'credit_status', 'created_at'],
      ['c_1', 'A', 'a.export@example.com', 'DE', 'Street 1', 'approved', 'active', '2024-01-26T15:23:22.699Z'],
    ]);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('ignored columns: "id", "status", "credit_status", "created_at"');
    expect(run.stderr).not.toContain('warning');
  });

  it('a column already fed is not asked about again: a second currency column is only ignored', async () => {
    const file = await csv([
      ['Name', 'Email', 'Country', 'Address', 'Currency', 'Zahlwährung'],
      ['A', 'a.fed@example.com', 'DE', 'Street 1', 'EUR', 'EUR'],
    ]);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('ignored columns: "Zahlwährung"');
  });

  it('--ignore-column naming no column is a usage error listing the headers found (nothing left behind)', async () => {
    const file = await csv(people('nope'));
    const run = await runCli(['import', file, ...REQUIRED_MAP, '--ignore-column', 'Nope'], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--ignore-column Nope: ' + file + ' has no such column; headers found: "Name", "E-Mail", "Land", "Anschrift", "Zahlwährung", "Eingangsdatum", "Kundennr.", "Bemerkung" [bad_option]',
    );
    expect(existsSync(`${file}.results.csv`)).toBe(false);
    const mapped = await runCli(['validate', file, ...REQUIRED_MAP, '--ignore-column', 'Land']);
    expect(mapped.code).toBe(2);
    expect(mapped.stderr).toContain('--ignore-column Land: that column feeds country');
  });
});

describe('validate warns and keeps its exit code', () => {
  it('on stderr in the plan and the summary, and in --json as lookalikeColumns', async () => {
    const file = await csv(people('validate'));
    const run = await runCli(['validate', file, ...REQUIRED_MAP, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `warning: column 5 "Zahlwährung" looks like currency: 3 of 3 values are currencies (e.g. "EUR"); import stops here until --map 'currency=Zahlwährung' sends it or --ignore-column 'Zahlwährung' drops it on purpose`,
    );
    expect(run.stderr).toContain('warning: column 6 "Eingangsdatum" looks like application_date');
    expect(run.stderr).toContain('warning: an import stops before sending at the unmapped columns "Zahlwährung", "Eingangsdatum"');
    const summary = JSON.parse(run.stdout) as { lookalikeColumns: { header: string; field: string; label: string; by: string; sampled: number; matching: number }[] };
    expect(summary.lookalikeColumns.map(({ header, field, label, by, sampled, matching }) => ({ header, field, label, by, sampled, matching }))).toEqual([
      { header: 'Zahlwährung', field: 'currency', label: '5', by: 'values', sampled: 3, matching: 3 },
      { header: 'Eingangsdatum', field: 'application_date', label: '6', by: 'values', sampled: 3, matching: 3 },
    ]);
    const quiet = await runCli(['validate', file, ...REQUIRED_MAP, '--quiet']);
    expect(quiet.code).toBe(0);
    const lines = quiet.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ccs-bulk: warning: column 5 "Zahlwährung" looks like currency/);
    expect(lines[1]).toMatch(/^ccs-bulk: warning: column 6 "Eingangsdatum" looks like application_date/);
  });

  it('names a spreadsheet\'s column by its letter, and reads its date cells as dates', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Kunden');
    sheet.addRow(GERMAN[0]!.slice(0, 6));
    sheet.addRow(['Anna Schmidt', 'anna@example.de', 'DE', 'Hauptstr. 1', 'EUR', new Date(Date.UTC(2024, 2, 15))]);
    sheet.addRow(['Jean Dupont', 'jean@example.fr', 'FR', '2 rue Haute', 'Euro', new Date(Date.UTC(2024, 3, 2))]);
    sheet.getColumn(6).numFmt = 'dd.mm.yyyy';
    const file = join(ctx.dir, 'kunden.xlsx');
    await writeFile(file, Buffer.from(await workbook.xlsx.writeBuffer()));
    const run = await runCli(['validate', file, ...REQUIRED_MAP]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('warning: column E "Zahlwährung" looks like currency: 2 of 2 values are currencies');
    expect(run.stderr).toContain('warning: column F "Eingangsdatum" looks like application_date: 2 of 2 values are dates (e.g. "2024-03-15")');
  });

  it('the config file\'s import.ignoreColumns drops them as the flag does', async () => {
    const file = await csv(people('config'));
    const config = join(ctx.dir, 'ignore.config.json');
    await writeFile(config, JSON.stringify({ import: { map: { country: 'Land', address: 'Anschrift' }, ignoreColumns: ['Zahlwährung', 'Eingangsdatum'] } }));
    const run = await runCli(['validate', file, '--config', config]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('warning');
    const printed = await runCli(['validate', file, '--config', config, '--print-config']);
    expect(printed.stdout).toContain('"ignoreColumn": {"value":["Zahlwährung","Eingangsdatum"],"from":"config"}');
  });
});

describe('--identity, --held-cache and --check-service', () => {
  it('--identity takes email, none or column:HEADER; anything else is a usage error naming the three', async () => {
    const file = await csv(people('identity'));
    const column = await runCli(['validate', file, ...REQUIRED_MAP, '--ignore-column', 'Zahlwährung', '--ignore-column', 'Eingangsdatum', '--identity', 'column:Kundennr.']);
    expect(column.code, column.stderr).toBe(0);
    const bogus = await runCli(['validate', file, ...REQUIRED_MAP, '--identity', 'bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('--identity takes email (a person is their e-mail), none (no matching) or column:HEADER');
    expect(bogus.stderr).toContain('got "bogus" [bad_option]');
    const config = join(ctx.dir, 'identity.config.json');
    await writeFile(config, JSON.stringify({ import: { identity: 'who' } }));
    const fromConfig = await runCli(['validate', file, '--config', config]);
    expect(fromConfig.code).toBe(2);
    expect(fromConfig.stderr).toMatch(/import\.identity: takes email .*got "who"/);
  });

  it('--held-cache is a file or none, for import; validate has no such flag', async () => {
    const file = await csv(people('held'));
    const printed = await runCli(['import', file, '--sandbox', '--held-cache', 'none', '--print-config']);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('"heldCache": {"value":"none","from":"flag"}');
    const empty = await runCli(['import', file, '--sandbox', '--held-cache', ' ', '--print-config']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--held-cache needs a file, or none');
    const validate = await runCli(['validate', file, '--held-cache', 'none']);
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain('unknown flag --held-cache for validate');
  });

  it('validate --check-service needs the connection settings, and says so; with them it sends nothing', async () => {
    const file = await csv(people('check').map((row) => row.slice(0, 4)));
    const alone = await runCli(['validate', file, ...REQUIRED_MAP, '--check-service']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--check-service asks the service, so validate needs its connection: no service base URL: set CCS_BASE_URL');
    expect(alone.stderr).toContain('[base_url_missing]');
    const before = ctx.sandbox.store.size;
    const connected = await runCli(['validate', file, ...REQUIRED_MAP, '--check-service'], { env: ctx.env() });
    expect(connected.code, connected.stderr).toBe(0);
    expect(ctx.sandbox.store.size).toBe(before);
  });
});

describe('the values that give a column away', () => {
  it.each(CURRENCY_SIGNS)('the sign %s is a currency', (sign) => {
    expect(looksLikeCurrency(sign)).toBe(true);
  });

  it('ISO codes in capitals and ISO names are currencies; words, country codes and numbers are not', () => {
    expect(['EUR', 'USD', 'CHF', 'Euro', 'us dollar', 'Pound Sterling'].filter((value) => !looksLikeCurrency(value))).toEqual([]);
    expect(['all', 'top', 'DE', 'DEU', '10023', 'VIP', 'ruft zurück', '12,50 €'].filter(looksLikeCurrency)).toEqual([]);
  });

  it('every date shape the date formats read is a date, whichever format the run was given', () => {
    expect(['2024-03-15', '2024-03-15T10:30:00', '15.03.2024', '03/15/2024', '1-2-2024'].filter((value) => !looksLikeDate(value))).toEqual([]);
    expect(['10023', '2024', '31.02.2024', '15.03.24', 'März 2024'].filter(looksLikeDate)).toEqual([]);
  });
});

describe('peekRows', () => {
  it('hands the first rows over and replays them; a reading error waits until the rows before it are read', async () => {
    const lines = ['name,email', ...Array.from({ length: 5 }, (_, i) => `n${i},e${i}@example.com`), 'bad,"unclosed'];
    const file = join(ctx.dir, 'peek.csv');
    await writeFile(file, `${lines.join('\n')}\n`);
    const source = await openRows(file);
    const peeked = await peekRows(source, 3);
    expect(peeked.rows.map((row) => row.values[0])).toEqual(['n0', 'n1', 'n2']);
    const read: RawRecord[] = [];
    let error: unknown;
    try {
      for await (const batch of peeked.source.batches) read.push(...batch);
    } catch (caught) {
      error = caught;
    }
    expect(read.map((row) => row.values[0])).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(error).toMatchObject({ code: 'csv_unclosed_quote' });
    await peeked.source.close();
  });
});
