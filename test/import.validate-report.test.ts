import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createPrivateKey } from 'node:crypto';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvRecord } from '../src/infra/csv-text.js';
import { RESULT_COLUMNS } from '../src/import/record/results.js';
import { importClients } from '../src/import/run-import.js';
import { sortResults } from '../src/import/record/sort-results.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { cli } from './cli-in-process.js';
import { readResults, useSandbox, validRows } from './helpers.js';

// Latency with jitter: under concurrency rows finish out of order.
const ctx = useSandbox({ latencyMs: 5, jitterMs: 40 });

/** 3 valid rows, then 12 with a bad e-mail under a mapped header, and dates read day-first. */
function mixedFile(): string {
  const rows = [
    ['Ana', 'ana@example.com', 'Italy', 'Via 1', '31/12/2024'],
    ['Bob', 'bob@example.com', 'Italy', 'Via 2', '01/02/2024'],
    ['Cy', 'cy@example.com', ' de ', 'Weg 3', ''],
  ];
  for (let i = 1; i <= 12; i++) rows.push([`Bad ${i}`, `bad${i}`, 'FR', `Rue ${i}`, '']);
  return stringify([['name', 'Mail', 'country', 'address', 'application_date'], ...rows]);
}

describe('validate shows the problems', () => {
  it('the first 10 invalid rows with row, column and message; the normalizations with counts', async () => {
    const input = join(ctx.dir, 'mixed.csv');
    await writeFile(input, mixedFile());
    const run = await cli(['validate', input, '--map', 'email=Mail', '--date-format', 'DD/MM/YYYY']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('invalid rows (the first 10 of 12; every one is in the results file):');
    // Named by the file's line, as the person fixing it sees it; the data row (the results file's `row`) beside it.
    expect(run.stderr).toContain('    line 5 (data row 4), column "Mail": not an e-mail address ("bad1")');
    expect(run.stderr).toContain('    line 14 (data row 13), column "Mail": not an e-mail address ("bad10")');
    expect(run.stderr).not.toContain('row 14,');
    expect(run.stderr).toMatch(/normalized: country "Italy" → "IT" ×2, .*application_date read as DD\/MM\/YYYY ×2/);
    expect(run.stderr).toContain('country "de" → "DE" ×1');
    expect(run.stderr).toContain('spaces around a value trimmed ×1');
  });

  it('--json lists every invalid row, each problem with its column', async () => {
    const input = join(ctx.dir, 'mixed-json.csv');
    await writeFile(input, mixedFile());
    const run = await cli(['validate', input, '--map', 'email=Mail', '--date-format', 'YYYY-MM-DD', '--json', '--quiet']);
    const summary = JSON.parse(run.stdout);
    // With ISO dates only, the two day-first dates are invalid too: 14 rows, every one listed.
    expect(summary.invalidRows).toHaveLength(14);
    expect(summary.invalidRows[0].problems[0]).toMatchObject({ column: 'application_date', message: expect.stringMatching(/not a real date/) });
    expect(summary.invalidRows[13]).toEqual({
      row: 15,
      line: 16,
      problems: [{ column: 'Mail', field: 'email', message: 'not an e-mail address ("bad12")' }],
    });
    expect(summary.counts).toMatchObject({ valid: 1, invalid: 14 });
    expect(summary.normalizations).toContainEqual({ field: 'country', from: 'de', to: 'DE', count: 1 });
  });
});

describe('the results file ends in row order', () => {
  it('an import whose rows finished out of order is rewritten sorted, every line kept', async () => {
    const input = join(ctx.dir, 'order.csv');
    await writeFile(input, stringify([['name', 'email', 'country', 'address'], ...validRows(120).map((r) => r.slice(0, 4))]));
    const service = createServiceClient({
      baseUrl: ctx.sandbox.url,
      token: ctx.sandbox.token,
      signer: createSigner(createPrivateKey(ctx.sandbox.privateKeyPem!)),
    });
    const results = join(ctx.dir, 'order.results.csv');
    try {
      const summary = await importClients({ file: input, service, results, concurrency: 16 });
      expect(summary.counts.created).toBe(120);
    } finally {
      await service.close();
    }
    const lines = await readResults(results);
    expect(lines.map((l) => Number(l[0]))).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(lines.every((l) => l[1] === 'created' && l[2]!.startsWith('cli_'))).toBe(true);
    // No temp file of the rewrite is left behind.
    expect((await readdir(ctx.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('the external sort (several runs) keeps every line, quoted newlines included', async () => {
    const path = join(ctx.dir, 'shuffled.results.csv');
    const rows = Array.from({ length: 500 }, (_, i) => i + 1);
    // Nearly in order, with a resumed file's shape: a block of early rows at the end.
    const order = [...rows.slice(0, 200).reverse(), ...rows.slice(300), ...rows.slice(200, 300)];
    const line = (row: number) =>
      csvRecord([String(row), 'created', `cli_${row}`, '200', '1', `key_${row}`, '', '', '', '', '', `Name, ${row}`, `Street ${row}\nTown "${row}"`], '\n');
    await writeFile(path, csvRecord([...RESULT_COLUMNS, 'name', 'address'], '\n') + order.map(line).join(''));
    await sortResults(path, 4_000);
    const text = await readFile(path, 'utf8');
    expect(text).toBe(csvRecord([...RESULT_COLUMNS, 'name', 'address'], '\n') + rows.map(line).join(''));
    expect((await readdir(ctx.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
