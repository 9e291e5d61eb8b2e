/**
 * --resume against an input edited since the results file's last run: a row edited after its
 * client was created has a new idempotency key, so sending it again could make a second client.
 * The run compares the input's SHA-256 with the one its last run recorded and, when rows it
 * created differ from their results lines, names them and sends nothing unless told to go on.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { CLIENT_HEADER, readResults, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

let cases = 0;
function inputWith(rows: string[][]): { input: string; results: string; write: (rows: string[][]) => void } {
  const input = join(ctx.dir, `changed-${++cases}.csv`);
  const write = (next: string[][]) => writeFileSync(input, stringify([CLIENT_HEADER, ...next]));
  write(rows);
  return { input, results: `${input}.results.csv`, write };
}

const sidecarHash = (results: string) => (JSON.parse(readFileSync(`${results}.meta.json`, 'utf8')) as { source?: { sha256?: string } }).source?.sha256;

describe('--resume on an input changed since the last run', () => {
  it('names the created rows that changed and sends nothing; --accept-changed-source goes on', async () => {
    const rows = validRows(10, 9100);
    const { input, results, write } = inputWith(rows);
    const first = await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() });
    expect(first.code, first.stderr).toBe(0);
    const hashBefore = sidecarHash(results);
    expect(hashBefore).toMatch(/^[0-9a-f]{64}$/);

    // An address corrected (same person), an e-mail corrected (the e-mail match cannot tell), a row added.
    const edited = rows.map((row) => [...row]);
    edited[2]![3] = 'Street 3a\nTown';
    edited[1]![1] = 'corrected.9101@example.com';
    write([...edited, ...validRows(1, 9200)]);
    const size = ctx.sandbox.store.size;
    const record = readFileSync(results);

    const refused = await runCliInProcess(['import', input, '--resume'], { env: ctx.env() });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('[source_changed]');
    expect(refused.stderr).toContain(`changed since ${results}'s last run`);
    expect(refused.stderr).toContain('2 rows created by an earlier run differ');
    expect(refused.stderr).toContain('row 2 (line 4): email "client9101@example.com" → "corrected.9101@example.com"');
    expect(refused.stderr).toContain('row 3 (line 6): address "Street 9102\\nTown 9102" → "Street 3a\\nTown"');
    expect(refused.stderr).toContain('--accept-changed-source');
    expect(ctx.sandbox.store.size).toBe(size);
    expect(readFileSync(results).equals(record)).toBe(true);

    const accepted = await runCliInProcess(['import', input, '--resume', '--accept-changed-source'], { env: ctx.env() });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stderr).toContain("the input changed since the results file's last run");
    expect(accepted.stderr).toContain('2 created row(s) changed and 0 gone, accepted (--accept-changed-source)');
    const lines = await readResults(results);
    const byRow = new Map(lines.map((line) => [line[0], line]));
    // The address edit: its person is held, so it is not sent again and says why.
    expect(byRow.get('3')?.[1]).toBe('skipped');
    expect(byRow.get('3')?.[7]).toBe('changed_since_created');
    // The e-mail edit is a new person to the service: the user said go on, so it is created.
    expect(byRow.get('2')?.[1]).toBe('created');
    expect(byRow.get('11')?.[1]).toBe('created');
    expect(ctx.sandbox.store.size).toBe(size + 2);
    expect(sidecarHash(results)).not.toBe(hashBefore);
  });

  it('rows only added, or rows not created yet fixed in place: the resume goes on and says so', async () => {
    const rows = validRows(6, 9300);
    rows[4]![1] = 'not an e-mail';
    const { input, results, write } = inputWith(rows);
    const first = await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() });
    // Exit 1: a row to fix.
    expect(first.code, first.stderr).toBe(1);
    expect((await readResults(results)).map((line) => line[1])).toEqual(['created', 'created', 'created', 'created', 'invalid', 'created']);

    const fixed = rows.map((row) => [...row]);
    fixed[4]![1] = 'fixed.9304@example.com';
    write([...fixed, ...validRows(2, 9400)]);
    const resumed = await runCliInProcess(['import', input, '--resume'], { env: ctx.env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('1 row(s) not created yet changed: sent as they are now');
    const outcomes = new Map((await readResults(results)).map((line) => [line[0], line[1]]));
    expect([...outcomes.entries()].sort(([a], [b]) => Number(a) - Number(b))).toEqual([
      ['1', 'created'], ['2', 'created'], ['3', 'created'], ['4', 'created'], ['5', 'created'], ['6', 'created'], ['7', 'created'], ['8', 'created'],
    ]);
  });

  it('an unchanged input resumes without a word about it', async () => {
    const { input, results } = inputWith(validRows(3, 9500));
    expect((await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() })).code).toBe(0);
    const again = await runCliInProcess(['import', input, '--resume'], { env: ctx.env() });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('changed since');
    expect((await readResults(results)).map((line) => line[1])).toEqual(['created', 'created', 'created']);
  });

  it('a created row the input no longer has is named too', async () => {
    const rows = validRows(4, 9600);
    const { input, write } = inputWith(rows);
    expect((await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() })).code).toBe(0);
    write(rows.slice(0, 3));
    const refused = await runCliInProcess(['import', input, '--resume'], { env: ctx.env() });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('1 created row the results file records is no longer in the input');
  });
});
