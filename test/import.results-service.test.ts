import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './cli-in-process.js';
import { readResults, runCli, useSandbox } from './helpers.js';

const ctx = useSandbox();

/** Two rows of their own per test: the same rows would be replays of another test's clients. */
const csv = (tag: string) => `name,email,country,address\nAna ${tag},ana.${tag}@example.com,IT,Via 1\nBob ${tag},bob.${tag}@example.com,FR,Rue 2\n`;

const meta = async (results: string) => JSON.parse(await readFile(`${results}.meta.json`, 'utf8')) as Record<string, unknown>;

describe('a results file knows its service', () => {
  it('a --sandbox rehearsal writes FILE.sandbox.results.csv, and the real import after it creates every row', async () => {
    const input = join(ctx.dir, 'real.csv');
    await writeFile(input, csv('real'));
    const rehearsal = await cli(['import', input, '--sandbox', '--quiet']);
    expect(rehearsal.code).toBe(0);
    const sandboxResults = `${input}.sandbox.results.csv`;
    expect((await readResults(sandboxResults)).map((l) => l[1])).toEqual(['created', 'created']);
    expect(await meta(sandboxResults)).toMatchObject({ written_by: 'import', service: expect.stringMatching(/^in-process sandbox /) });

    const before = ctx.sandbox.store.size;
    const real = await cli(['import', input, '--quiet'], ctx.env());
    expect(real.code).toBe(0);
    expect(ctx.sandbox.store.size).toBe(before + 2);
    expect(await meta(`${input}.results.csv`)).toMatchObject({ written_by: 'import', service: ctx.sandbox.url });
  });

  it('--resume of a file written against another service is refused: exit 2, results_other_service, the way out', async () => {
    const input = join(ctx.dir, 'elsewhere.csv');
    await writeFile(input, csv('elsewhere'));
    expect((await cli(['import', input, '--sandbox', '--quiet'])).code).toBe(0);
    const results = `${input}.sandbox.results.csv`;
    const resumed = await runCli(['import', input, '--results', results, '--resume'], { env: ctx.env() });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toMatch(/written against in-process sandbox .*not http:\/\/127\.0\.0\.1:\d+.*--overwrite.*--results.*\[results_other_service\]/s);
    expect(resumed.stderr).not.toMatch(/\n\s+at /);
    // Nothing was sent, and the file is as it was.
    expect((await readResults(results)).map((l) => l[1])).toEqual(['created', 'created']);
    // --overwrite starts it again against this service.
    const overwritten = await cli(['import', input, '--results', results, '--overwrite', '--quiet'], ctx.env());
    expect(overwritten.code).toBe(0);
    expect(await meta(results)).toMatchObject({ service: ctx.sandbox.url });
    // Now --resume against the same service is accepted: every row was created, so all are skipped.
    const again = await cli(['import', input, '--results', results, '--resume', '--json', '--quiet'], ctx.env());
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).counts).toMatchObject({ created: 0, skipped: 2 });
  });

  it("validate's file is replaced by the next validate and by import, saying so; an import's file is not", async () => {
    const input = join(ctx.dir, 'new.csv');
    await writeFile(input, csv('new'));
    const results = `${input}.results.csv`;
    expect((await cli(['validate', input])).code).toBe(0);
    expect(await meta(results)).toMatchObject({ written_by: 'validate', service: null });
    const second = await cli(['validate', input]);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`replacing ${results}, written by validate (it records no sends)`);
    const before = ctx.sandbox.store.size;
    const imported = await cli(['import', input], ctx.env());
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain('written by validate');
    expect(ctx.sandbox.store.size).toBe(before + 2);
    expect((await readResults(results)).map((l) => l[1])).toEqual(['created', 'created']);
    // The import's file records sends: a validate never replaces it, and names a file of its own
    // instead (never --resume or --overwrite, which would write into the import's record).
    const refused = await cli(['validate', input]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/written by an import against .*--results \S*new\.csv\.validate\.csv.*\[results_exist\]/);
    expect(refused.stderr).not.toMatch(/--resume|--overwrite/);
  });
});
