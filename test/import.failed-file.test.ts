import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFailed } from '../src/import/record/failed.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { cli } from './cli-in-process.js';
import { readResults, useSandbox } from './helpers.js';

const ctx = useSandbox();

/** A German Excel CSV: windows-1252, `;`, its headers mapped with --map (a misspelt country makes a row invalid). */
const GERMAN = [
  'Name;E-Mail;Land;Anschrift;Währung',
  'Müller GmbH;mueller@example.de;Deutschlnd;Straße 1;EUR',
  'Bär AG;kaputt;DE;Weg 2;EUR',
  'Öko AG;oeko@example.de;DE;Ölweg 3;EUR',
].join('\r\n');
const MAP = ['--map', 'country=Land', '--map', 'address=Anschrift', '--map', 'currency=Währung'];

/** The words of a printed shell command (single quotes as shellQuote writes them). */
const words = (command: string) => [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);

describe('a --failed file re-imports as it is', () => {
  it("keeps the input's delimiter and encoding, and the hint is the whole command, --map included", async () => {
    const input = join(ctx.dir, 'kunden.csv');
    const fix = join(ctx.dir, 'kunden-fix.csv');
    await writeFile(input, Buffer.from(GERMAN, 'latin1'));
    const run = await cli(['import', input, ...MAP, '--failed', fix], ctx.env());
    expect(run.code).toBe(1);
    const bytes = await readFile(fix);
    // windows-1252 (ä is one byte 0xE4), not UTF-8 (C3 A4), and no BOM.
    expect(bytes.includes(Buffer.from('Währung', 'latin1'))).toBe(true);
    expect(bytes.includes(Buffer.from('ä', 'utf8'))).toBe(false);
    const text = bytes.toString('latin1');
    expect(text.split('\n')[0]).toBe('Name;E-Mail;Land;Anschrift;Währung;idempotency_key;error');
    expect(text).toContain('Müller GmbH;mueller@example.de;Deutschlnd;Straße 1;EUR;;');

    const hint = run.stderr.split('\n').findIndex((line) => line.startsWith('  rows to fix: 2 rows in '));
    expect(hint).toBeGreaterThan(0);
    const command = run.stderr.split('\n')[hint + 1]!.trim();
    expect(command).toBe(`ccs-bulk import ${shellQuote(fix)} --map country=Land --map address=Anschrift --map 'currency=Währung'`);

    // Fixed where a user would fix them, saved as it was, and imported with the printed command.
    await writeFile(fix, Buffer.from(text.replace('Deutschlnd', 'DE').replace('kaputt', 'baer@example.de'), 'latin1'));
    const again = await cli([...words(command).slice(1), '--json', '--quiet'], ctx.env());
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).counts).toMatchObject({ created: 2, invalid: 0 });
    expect(ctx.sandbox.store.all().map((c) => c.name)).toEqual(expect.arrayContaining(['Müller GmbH', 'Bär AG', 'Öko AG']));

    // Its results: the input's idempotency_key column prefixed, the old `error` not carried over.
    const resultsText = await readFile(`${fix}.results.csv`, 'utf8');
    const header = resultsText.split('\n')[0]!.split(',');
    expect(header.slice(11)).toEqual(['Name', 'E-Mail', 'Land', 'Anschrift', 'Währung', 'input.idempotency_key']);
    expect(new Set(header).size).toBe(header.length);
    expect(resultsText).not.toContain('e-mail address');
    expect((await readResults(`${fix}.results.csv`)).map((l) => l[1])).toEqual(['created', 'created']);
  });

  it('each line names the input file, line and data row it came from, kept across rounds of fixing', async () => {
    const input = join(ctx.dir, 'origin.csv');
    await writeFile(input, 'name,email,country,address\nOk,ok@origin.example,DE,A 1\nBad One,no-at,DE,A 2\n\nBad Two,also-bad,DE,A 3\n');
    const fix = join(ctx.dir, 'origin-fix.csv');
    expect((await cli(['import', input, '--failed', fix, '--quiet'], ctx.env())).code).toBe(1);
    const first = await readResults(fix);
    // The blank line is not a data row: line 5 is data row 3.
    expect(first.map((line) => line.at(-1)!.replace(/: email.*/, ''))).toEqual(['origin.csv line 3 (data row 2)', 'origin.csv line 5 (data row 3)']);
    // One row fixed; the other still wrong: the next --failed file still names origin.csv's line 5.
    await writeFile(fix, (await readFile(fix, 'utf8')).replace('no-at', 'one@origin.example'));
    const fix2 = join(ctx.dir, 'origin-fix-2.csv');
    expect((await cli(['import', fix, '--failed', fix2, '--quiet'], ctx.env())).code).toBe(1);
    const second = await readResults(fix2);
    expect(second).toHaveLength(1);
    expect(second[0]!.at(-1)).toMatch(/^origin\.csv line 5 \(data row 3\): email: /);
  });

  it('no hint when there is nothing to fix', async () => {
    const input = join(ctx.dir, 'clean.csv');
    await writeFile(input, 'name,email,country,address\nCleo,cleo@example.com,IT,Via 9\n');
    const run = await cli(['import', input, '--failed', join(ctx.dir, 'clean-fix.csv')], ctx.env());
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain('rows to fix');
  });

  it('a value the encoding cannot hold turns the whole file into UTF-8 with a BOM', async () => {
    const path = join(ctx.dir, 'mixed-fix.csv');
    const failed = openFailed(path, ['Name', 'Ort'], { addKeyColumn: false, delimiter: ';', encoding: { name: 'windows-1252', bom: false } });
    failed.write(['Müller', 'Köln €'], 'country: unknown');
    expect(failed.encoding).toEqual({ name: 'windows-1252', changed: false });
    failed.write(['Łukasz', 'Łódź'], 'email: wrong');
    failed.write(['Zoë', 'Paris'], 'failed');
    expect(failed.encoding).toEqual({ name: 'utf-8', changed: true });
    expect(failed.rows).toBe(3);
    failed.close();
    const bytes = await readFile(path);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe(
      'Name;Ort;error\nMüller;Köln €;country: unknown\nŁukasz;Łódź;email: wrong\nZoë;Paris;failed\n',
    );
  });
});
