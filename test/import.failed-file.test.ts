import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFailed } from '../src/import/record/failed.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { cli } from './cli-in-process.js';
import { readResults, useSandbox } from './helpers.js';

const ctx = useSandbox();

/** A German Excel CSV: windows-1252, `;`, headers that need --map. */
const GERMAN = [
  'Name;E-Mail;Land;Anschrift;Währung',
  'Müller GmbH;mueller@example.de;Deutschland;Straße 1;EUR',
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
    expect(text).toContain('Müller GmbH;mueller@example.de;Deutschland;Straße 1;EUR;;');

    const hint = run.stderr.split('\n').findIndex((line) => line.startsWith('  rows to fix: 2 rows in '));
    expect(hint).toBeGreaterThan(0);
    const command = run.stderr.split('\n')[hint + 1]!.trim();
    expect(command).toBe(`ccs-bulk import ${shellQuote(fix)} --map country=Land --map address=Anschrift --map 'currency=Währung'`);

    // Fixed where a user would fix them, saved as it was, and imported with the printed command.
    await writeFile(fix, Buffer.from(text.replace('Deutschland', 'DE').replace('kaputt', 'baer@example.de'), 'latin1'));
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
