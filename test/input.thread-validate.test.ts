/**
 * The reader thread stops early without a hang (the consumer leaves, throws, or never reads),
 * and validate through it writes the same results file as the inline pipeline, for a large CSV
 * and a large .xlsx. (What it reads, file by file: input.thread.test.ts.)
 */
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { openRows } from '../src/import/read/index.js';
import { importClients } from '../src/import/run-import.js';
import { runCliInProcess as runCli } from './helpers.js';
import { useInputFiles } from './input.helpers.js';
import { noise, sheetFile } from './input.thread.helpers.js';

const { file, path } = useInputFiles();

describe('a reader thread the consumer leaves', () => {
  it('stops reading and ends when the consumer stops after one batch', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `n${i},e${i}@example.com,DE`).join('\n');
    const big = await file('leave.csv', `name,email,country\n${lines}\n`);
    const source = await openRows(big, { thread: 'always' });
    let batches = 0;
    for await (const batch of source.batches) {
      expect(batch.length).toBeGreaterThan(0);
      batches++;
      break;
    }
    expect(batches).toBe(1);
    expect(source.bytesRead()).toBeLessThan((await stat(big)).size / 4);
    // The thread closes its file and ends when asked (a thread that does not is stopped after 5 s).
    const started = Date.now();
    await source.close();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('ends when the consumer throws mid-file, and batches stop after close', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `n${i},e${i}`).join('\n');
    const source = await openRows(await file('throw.csv', `name,email\n${lines}\n`), { thread: 'always' });
    const failure = (async () => {
      for await (const batch of source.batches) if (batch[0]!.row > 1000) throw new Error('consumer failed');
    })();
    await expect(failure).rejects.toThrow('consumer failed');
    const started = Date.now();
    await source.close();
    expect(Date.now() - started).toBeLessThan(2000);
    let after = 0;
    for await (const batch of source.batches) after += batch.length;
    expect(after).toBe(0);
  });

  it('an importer that fails after opening the file still ends the thread', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `n${i},e${i}@example.com,FR,addr`).join('\n');
    const csv = await file('plan-throws.csv', `name,email,country,address\n${lines}\n`);
    const run = importClients({
      file: csv,
      dryRun: true,
      results: path('plan-throws.results.csv'),
      read: { thread: 'always' },
      onPlan: () => {
        throw new Error('onPlan failed');
      },
    });
    await expect(run).rejects.toThrow('onPlan failed');
  });

  it('closes before any batch is read', async () => {
    const source = await openRows(await file('close-early.csv', 'a,b\n1,2\n'), { thread: 'always' });
    expect(source.headers).toEqual(['a', 'b']);
    await source.close();
    await source.close();
  });
});

describe('validate of a large file (parsed on the reader thread)', () => {
  it('writes the same results file as the inline pipeline', async () => {
    // 9 MiB: over the 8 MiB from which validate parses on a second thread.
    const rows = Array.from(
      { length: 110_000 },
      (_, i) =>
        `"Zoë ${i}, Ltd",z${i % 90_000}@example.com,${i % 7 === 0 ? 'Narnia' : 'FR'},"${i} rue de la Paix\nParis",EUR,2024-0${1 + (i % 9)}-1${i % 10}`,
    );
    const csv = await file('large.csv', `name,email,country,address,currency,application_date\n${rows.join('\n')}\n`);
    expect((await stat(csv)).size).toBeGreaterThan(8 * 1024 * 1024);

    const cli = await runCli(['validate', csv, '--results', path('large.thread.csv'), '--quiet', '--json']);
    expect(cli.code).toBe(1);
    const summary = JSON.parse(cli.stdout) as { rows: number; counts: Record<string, number>; source: { thread?: boolean } };
    // A one-core machine parses inline: the results are the same either way.
    expect(summary.source.thread).toBe(availableParallelism() > 1 ? true : undefined);
    await importClients({ file: csv, dryRun: true, results: path('large.inline.csv'), read: { thread: 'never' } });

    expect(summary.rows).toBe(110_000);
    // Rows from 90,000 on repeat an e-mail of 90,000 rows before: one person, a duplicate when both are valid.
    const valid = (i: number) => i % 7 !== 0;
    const repeats = rows.filter((_, i) => i >= 90_000 && valid(i) && valid(i - 90_000)).length;
    expect(summary.counts).toMatchObject({ invalid: 15_715, duplicate: repeats });
    // An option the reader refuses ends the run as it would inline: one line, exit 2.
    const refused = await runCli(['validate', csv, '--results', path('large.refused.csv'), '--encoding', 'no-such-encoding']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^ccs-bulk: error: .*no-such-encoding/m);
    expect(refused.stderr).not.toMatch(/internal error|\n\s+at /);

    const threaded = await readFile(path('large.thread.csv'), 'utf8');
    expect(threaded).toBe(await readFile(path('large.inline.csv'), 'utf8'));
    expect(threaded.startsWith('row,outcome,')).toBe(true);
  });

  it('reads a large .xlsx on the thread and writes the same results file as the inline pipeline', async () => {
    const header = ['name', 'email', 'country', 'address', 'currency', 'application_date'];
    const rows = Array.from({ length: 40_000 }, (_, i) => [
      `Zoë ${i}`,
      `z${i}@example.com`,
      i % 9 === 0 ? 'Narnia' : 'FR',
      `${noise(i)} rue\nParis`,
      'EUR',
      `2024-0${1 + (i % 9)}-1${i % 10}`,
    ]);
    const xlsx = sheetFile(path('large.xlsx'), header, rows);
    // Over the 1 MiB from which validate reads an .xlsx on a second thread.
    expect((await stat(xlsx)).size).toBeGreaterThan(1024 * 1024);

    const cli = await runCli(['validate', xlsx, '--results', path('large-xlsx.thread.csv'), '--quiet', '--json']);
    expect(cli.code).toBe(1);
    const summary = JSON.parse(cli.stdout) as { rows: number; counts: Record<string, number>; source: { thread?: boolean } };
    expect(summary.source.thread).toBe(availableParallelism() > 1 ? true : undefined);
    await importClients({ file: xlsx, dryRun: true, results: path('large-xlsx.inline.csv'), read: { thread: 'never' } });
    expect(summary.rows).toBe(40_000);
    expect(summary.counts).toMatchObject({ valid: 35_555, invalid: 4445 });
    const threaded = await readFile(path('large-xlsx.thread.csv'), 'utf8');
    expect(threaded).toBe(await readFile(path('large-xlsx.inline.csv'), 'utf8'));
  });
});
