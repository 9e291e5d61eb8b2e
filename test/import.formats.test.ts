/**
 * Issue 4 end to end: every real-world fixture imports into the sandbox with identical
 * normalized content; every malformed one ends with its documented exit code, a message
 * naming the line, and nothing invalid sent.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { makeTempDir, ROOT, readResults, runCliInProcess as runCli, sandboxEnv, writeKeyFile, startTestSandbox } from './helpers.js';

const INPUT = join(ROOT, 'fixtures', 'input');
const GOOD = [
  'excel-semicolon-cp1252-crlf.csv',
  'excel-semicolon-cp1252-crlf-sep.csv',
  'utf8-bom.csv',
  'utf16le-tab.txt',
  'libreoffice.csv',
  'google-sheets.csv',
  'crm-pipe.csv',
  'clients.xlsx',
];

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let base: Sandbox;
let keyFile: string;
let expected: { headers: string[]; rows: string[][] };

beforeAll(async () => {
  temp = await makeTempDir();
  base = await startTestSandbox();
  keyFile = await writeKeyFile(temp.dir, base.privateKeyPem);
  expected = JSON.parse(await readFile(join(INPUT, 'expected.json'), 'utf8'));
});
afterAll(async () => {
  await base.close();
  await temp.cleanup();
});

/** What the service should hold for the expected rows, keyed by e-mail. */
function expectedClients() {
  return new Map(
    expected.rows.map(([name, email, country, address, currency]) => [
      email,
      { name, email, country, address, currency },
    ]),
  );
}

describe('real-world files import with identical normalized content', () => {
  it.each(GOOD)('%s', async (file) => {
    const sandbox = await startSandbox({ publicKeyPem: base.publicKeyPem!, token: base.token });
    const results = join(temp.dir, `${file}.results.csv`);
    const run = await runCli(['import', join(INPUT, file), '--results', results, '--json'], {
      env: sandboxEnv(sandbox, keyFile),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: expected.rows.length, invalid: 0 });
    const held = sandbox.store
      .all()
      .map(({ name, email, country, address, currency }) => [email, { name, email, country, address, currency }] as const);
    expect(new Map(held)).toEqual(expectedClients());
    // Leading zeros and long digit strings are echoed as text, never cast.
    const echoed = (await readResults(results)).map((line) => line.at(-1));
    expect(echoed.sort()).toEqual(expected.rows.map((row) => row[6]).sort());
    await sandbox.close();
  });
});

describe('malformed files', () => {
  it.each([
    ['empty.csv', 2, /empty/],
    ['blank.csv', 2, /empty|blank/],
    ['binary.csv', 2, /binary|NUL/i],
    ['nul-bytes.csv', 2, /NUL bytes \(line \d+\)/],
    ['legacy.xls', 2, /cannot read the workbook/],
    ['calc.ods', 2, /cannot read the workbook/],
    ['workbook-named.csv', 2, /\.xlsx|save it as/],
    ['duplicate-headers.csv', 2, /are both/],
  ])('%s: exit %i, clear message, nothing sent', async (file, code, message) => {
    const before = base.stats.requests;
    const run = await runCli(
      ['import', join(INPUT, 'malformed', file), '--results', join(temp.dir, `${file}.r.csv`)],
      {
        env: sandboxEnv(base, keyFile),
      },
    );
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain(file);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(base.stats.requests).toBe(before);
  });

  it('an unbalanced quote: rows before it are created and recorded, the error names the opening line, exit 2', async () => {
    const sandbox = await startSandbox({ publicKeyPem: base.publicKeyPem!, token: base.token });
    const file = join(INPUT, 'malformed', 'unbalanced-quote.csv');
    const results = join(temp.dir, 'unbalanced.results.csv');
    const run = await runCli(['import', file, '--results', results], { env: sandboxEnv(sandbox, keyFile) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/line 4/);
    const lines = await readResults(results);
    const created = lines.filter((l) => l[1] === 'created');
    expect(created.length).toBeGreaterThan(0);
    expect(sandbox.store.size).toBe(created.length);
    await sandbox.close();
  });

  it('ragged rows are invalid rows, not the end of the run', async () => {
    const sandbox = await startSandbox({ publicKeyPem: base.publicKeyPem!, token: base.token });
    const results = join(temp.dir, 'ragged.results.csv');
    const run = await runCli(
      ['import', join(INPUT, 'malformed', 'ragged.csv'), '--results', results, '--json'],
      {
        env: sandboxEnv(sandbox, keyFile),
      },
    );
    expect(run.code).toBe(1);
    const lines = await readResults(results);
    const invalid = lines.filter((l) => l[1] === 'invalid');
    expect(invalid.length).toBeGreaterThan(0);
    for (const line of invalid) expect(line[9]).toMatch(/row has \d+ fields? but the header has \d+/);
    expect(sandbox.store.size).toBe(lines.filter((l) => l[1] === 'created').length);
    await sandbox.close();
  });

  it('a header-only file is a clean run of 0 rows', async () => {
    const run = await runCli([
      'validate',
      join(INPUT, 'malformed', 'header-only.csv'),
      '--results',
      join(temp.dir, 'h.csv'),
      '--json',
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).rows).toBe(0);
  });
});
