import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { readResults, runCliInProcess as runCli, useSandbox } from './helpers.js';

let n = 0;

const ctx = useSandbox();

async function csv(rows: string[][]): Promise<string> {
  const path = join(ctx.dir, `in-${++n}.csv`);
  await writeFile(path, stringify(rows));
  return path;
}

describe('header matching', () => {
  it('matches headers ignoring case, spaces and punctuation, and reports unknown columns once', async () => {
    const file = await csv([
      [' Full Name ', 'E-Mail Address', 'COUNTRY', 'Street_Address', 'ccy', 'Sales Rep'],
      ['Ana Pérez', 'ana@example.com', 'esp', 'Calle 1, Madrid', 'eur', 'Bob'],
      ['Li Wei', 'li@example.com', 'China', 'Road 2, Beijing', 'CNY', 'Bob'],
    ]);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('ignored columns: "Sales Rep"');
    expect(run.stderr.match(/Sales Rep/g)).toHaveLength(1);
    const lines = await readResults(`${file}.results.csv`);
    // Lines come in the order rows finish; `row` says which is which.
    const clientOf = (row: string) => ctx.sandbox.store.get(lines.find((l) => l[0] === row)![2]!);
    const ana = clientOf('1');
    expect([ana?.name, ana?.email, ana?.country, ana?.currency]).toEqual([
      'Ana Pérez',
      'ana@example.com',
      'ES',
      'EUR',
    ]);
    expect(clientOf('2')?.country).toBe('CN');
  });

  it('stops before sending when required columns are missing, naming them and the headers found', async () => {
    const before = ctx.sandbox.stats.requests;
    const file = await csv([
      ['Client', 'Contact', 'Country', 'Where'],
      ['A', 'a@example.com', 'DE', 'Street 1'],
    ]);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'missing required columns name, email, address; headers found: "Client", "Contact", "Country", "Where"',
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(ctx.sandbox.stats.requests).toBe(before);
    const mapped = await runCli(
      ['validate', file, '--map', 'name=Client', '--map', 'email=contact', '--map', 'address=WHERE'],
      {},
    );
    expect(mapped.code).toBe(0);
    const bad = await runCli(['validate', file, '--map', 'nom=Client'], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown field "nom"');
  });

  it('under a title, names the row that holds the most required columns, not the title', async () => {
    // Headers no language of ours knows for country and address (German ones are read: import.languages).
    const file = await csv([
      ['Kundenliste — Export vom 2026-11-20'],
      ['Name', 'E-Mail', 'Herkunft', 'Bleibe'],
      ['A', 'a@example.com', 'DE', 'Street 1'],
    ]);
    const run = await runCli(['validate', file], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'missing required columns country, address; headers found (line 2): "Name", "E-Mail", "Herkunft", "Bleibe". ' +
        'Rename the columns or use --map field=Header (--header-row N if the header is another row).',
    );
    const mapped = await runCli(['validate', file, '--map', 'country=Herkunft', '--map', 'address=Bleibe'], {});
    expect(mapped.code, mapped.stderr).toBe(0);
    expect(mapped.stderr).toContain('header: line 2; line 1 above it skipped (not data)');
  });

  it('refuses two columns that both look like the same field', async () => {
    const file = await csv([
      ['name', 'email', 'Email', 'country', 'address'],
      ['A', 'a@x.com', 'b@x.com', 'DE', 'S 1'],
    ]);
    const run = await runCli(['validate', file], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('columns 2 and 3 are both "email"');
  });
});

describe('row checks', () => {
  it('lists every problem, never sends invalid or duplicate rows, and writes a fixable --failed file', async () => {
    const before = ctx.sandbox.store.size;
    const requestsBefore = ctx.sandbox.stats.requests - ctx.sandbox.stats.reads;
    const header = ['name', 'email', 'country', 'address', 'currency', 'application_date', 'ref'];
    const file = await csv([
      header,
      ['Good One', 'good1@example.com', 'DE', 'Street 1', 'EUR', '2024-02-29', '001'],
      ['', 'bad', 'Germny', '', 'EUR0', '2023-02-29', '002'],
      ['Good One', 'GOOD1@example.com', 'Germany', 'Street  1', 'eur', '2024-02-29', '003'],
      ['Short', 'short@example.com'],
      ['\'=HYPERLINK("x")', 'formula@example.com', 'FR', "'+33 Rue", 'EUR', '', '005'],
    ]);
    const failed = join(ctx.dir, 'fix-me.csv');
    const run = await runCli(['import', file, '--failed', failed, '--json', '--quiet'], { env: ctx.env() });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 2, invalid: 2, duplicate: 1 });
    expect(ctx.sandbox.store.size - before).toBe(2);
    // Not even attempted: exactly one Create Client per valid, first-seen row (the reads before
    // the first row list who the service holds).
    expect(ctx.sandbox.stats.requests - ctx.sandbox.stats.reads - requestsBefore).toBe(2);
    const lines = await readResults(`${file}.results.csv`);
    const byRow = new Map(lines.map((l) => [l[0], l]));
    expect(byRow.get('2')?.[9]).toBe(
      'name: required, but empty; email: not an e-mail address ("bad"); country: unknown country "Germny" (did you mean Germany (DE)?); ' +
        'address: required, but empty; currency: not an ISO 4217 currency code ("EUR0"; did you mean EUR?); application_date: not a real date in YYYY-MM-DD ("2023-02-29")',
    );
    expect(byRow.get('3')?.[1]).toBe('duplicate');
    expect(byRow.get('3')?.[9]).toBe('same idempotency key as line 2');
    expect(byRow.get('4')?.[9]).toMatch(/^row has 2 fields but the header has 7/);
    // The export's formula escape is undone on the way in.
    const formula = ctx.sandbox.store.get(byRow.get('5')![2]!);
    expect([formula?.name, formula?.address]).toEqual(['=HYPERLINK("x")', '+33 Rue']);

    // Fix the failed file in place and import it again: only the fixed rows are created.
    const fixed = (await readFile(failed, 'utf8'))
      .replace(/^,bad,Germny,,EUR0,2023-02-29/m, 'Fixed,fixed@example.com,Germany,Street 9,EUR,2023-02-28')
      .replace(/^Short,short@example\.com,+/m, 'Short,short@example.com,PL,Street 4,PLN,,004,,');
    await writeFile(failed, fixed);
    const again = await runCli(['import', failed, '--json', '--quiet'], { env: ctx.env() });
    expect(JSON.parse(again.stdout).counts).toMatchObject({ created: 2, invalid: 0 });
    expect(again.code).toBe(0);
  });

  it('uses the row idempotency_key, --date-format and --max-errors', async () => {
    const file = await csv([
      ['name', 'email', 'country', 'address', 'application_date', 'idempotency_key'],
      ['K1', 'k1@example.com', 'DE', 'S 1', '31/12/2023', 'my-key-1'],
      ['K2', 'k2@example.com', 'DE', 'S 2', '12/31/2023', 'my-key-2'],
    ]);
    const run = await runCli(['import', file, '--date-format', 'DD/MM/YYYY', '--json', '--quiet'], {
      env: ctx.env(),
    });
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 1, invalid: 1 });
    expect(ctx.sandbox.store.byIdempotencyKey('my-key-1')?.name).toBe('K1');

    const many = await csv([
      ['name', 'email', 'country', 'address'],
      ...Array.from({ length: 20 }, () => ['x', 'bad', 'DE', 'S']),
    ]);
    const stopped = await runCli(['validate', many, '--max-errors', '3'], {});
    expect(stopped.code).toBe(3);
    expect(stopped.stderr).toContain('stopped after 3 errors (--max-errors 3)');
    const lines = await readResults(`${many}.results.csv`);
    expect(lines).toHaveLength(20);
    expect(lines.filter((l) => l[1] === 'not_attempted')).toHaveLength(17);
  });
});

describe('validate', () => {
  it('sends nothing, reports valid/invalid/duplicate and the plan, exit 0 or 1', async () => {
    const before = ctx.sandbox.stats.requests;
    const good = await csv([
      ['name', 'email', 'country', 'address'],
      ['A', 'a@example.com', 'DE', 'S 1'],
      ['A', 'a@example.com', 'DE', 'S 1'],
    ]);
    const ok = await runCli(['validate', good], { env: ctx.env() });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('utf-8');
    expect(ok.stderr).toContain('delimiter ","');
    expect(ok.stderr).toContain('1 valid, 0 invalid, 1 duplicate');
    const lines = await readResults(`${good}.results.csv`);
    expect(lines.map((l) => l[1])).toEqual(['valid', 'duplicate']);
    const dry = await runCli(['import', good, '--dry-run', '--overwrite'], {});
    expect(dry.code).toBe(0);
    expect(ctx.sandbox.stats.requests).toBe(before);
  });

  it('gives clear usage errors for bad flags and unreadable input', async () => {
    const missing = await runCli(['validate', join(ctx.dir, 'nope.csv')], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.csv');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const flag = await runCli(['import', 'x.csv', '--concurency', '3'], {});
    expect(flag.code).toBe(2);
    const zero = await runCli(['validate', 'x.csv', '--concurrency', '0'], {});
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--concurrency must be at least 1');
  });
});
