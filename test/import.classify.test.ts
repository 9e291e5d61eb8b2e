/**
 * The import loop's parts, apart: the row classifier as a table (each verdict from the row
 * alone and the run's keys so far), and the recorder's counts, error codes and --max-errors.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClassifyRules, classifyRow, type RowVerdict } from '../src/import/row/classify-row.js';
import { mapColumns } from '../src/import/row/columns.js';
import { deriveKey } from '../src/import/row/key.js';
import { KeySet } from '../src/import/row/key-set.js';
import { Recorder } from '../src/import/record/recorder.js';
import { openResults } from '../src/import/record/results.js';
import { rowValidator } from '../src/import/row/validate-row.js';
import { makeTempDir, readResults } from './helpers.js';

const HEADERS = ['name', 'email', 'country', 'address'];
const validate = rowValidator(mapColumns('t.csv', HEADERS, {}), { dateFormat: 'YYYY-MM-DD', liquidityType: 'chain' });
const ANA = ['Ana', 'ana@example.com', 'DE', 'Street 1'];
const BOB = ['Bob', 'bob@example.com', 'FR', 'Street 2'];
const keyOfRow = (values: string[]) => {
  const check = validate(values);
  if (!check.ok) throw new Error('invalid');
  return deriveKey(check.value);
};

function rules(overrides: Partial<ClassifyRules> = {}): ClassifyRules {
  return { validate, seen: new KeySet(), created: new KeySet(), dryRun: false, ...overrides };
}

describe('classifyRow', () => {
  const alreadyCreated = new KeySet();
  alreadyCreated.add(keyOfRow(BOB), 1);
  it.each<[string, string[][], Partial<ClassifyRules>, RowVerdict['kind']]>([
    ['a good row is sent', [ANA], {}, 'send'],
    ['a good row in a dry run is valid', [ANA], { dryRun: true }, 'valid'],
    ['an empty e-mail is invalid', [['Ana', '', 'DE', 'Street 1']], {}, 'invalid'],
    ['a row whose key came earlier is a duplicate', [ANA, ['  Ana ', 'ANA@example.com', 'Germany', 'Street 1']], {}, 'duplicate'],
    ['a row created by the run resumed is skipped', [BOB], { created: alreadyCreated }, 'skipped'],
    ['a duplicate wins over skipped', [BOB, BOB], { created: alreadyCreated }, 'duplicate'],
  ])('%s', (_name, rows, overrides, kind) => {
    const context = rules(overrides);
    const verdicts = rows.map((values, i) => classifyRow(values, i + 1, context));
    expect(verdicts.at(-1)?.kind).toBe(kind);
  });

  it.each([
    ['#VALUE!', 'name'],
    ['#N/A', 'name'],
    ['#DIV/0!', 'address'],
    ['#REF!', 'address'],
    ['#NAME?', 'name'],
    ['Err:509', 'name'],
  ])('a spreadsheet error value (%s in %s) is invalid, never sent as text', (error, field) => {
    const values = field === 'name' ? [error, 'ana@example.com', 'DE', 'Street 1'] : ['Ana', 'ana@example.com', 'DE', error];
    expect(classifyRow(values, 1, rules())).toEqual({
      kind: 'invalid',
      issues: `${field}: holds a spreadsheet error (${error}): the formula behind the cell failed; fix it in the workbook`,
      list: [`${field}: holds a spreadsheet error (${error}): the formula behind the cell failed; fix it in the workbook`],
    });
  });

  it('text that only looks like an error value is data', () => {
    for (const name of ['#1 Supplies', 'N/A Holdings', 'Err:5091', 'Error: Ltd', '#VALUE! Corp']) {
      expect(classifyRow([name, 'ana@example.com', 'DE', 'Street 1'], 1, rules()).kind).toBe('send');
    }
  });

  it('says why, and which row came first', () => {
    const context = rules();
    expect(classifyRow(['Ana', 'two@', 'Atlantis', ''], 1, context)).toMatchObject({
      kind: 'invalid',
      issues: expect.stringMatching(/^email: .*; country: .*; address: /),
    });
    classifyRow(ANA, 2, context);
    expect(classifyRow(ANA, 3, context)).toEqual({ kind: 'duplicate', key: keyOfRow(ANA), firstRow: 2 });
    expect(classifyRow(BOB, 4, context)).toMatchObject({ kind: 'send', key: keyOfRow(BOB), fields: { country: 'FR' } });
  });
});

const IMPORT_META = { writtenBy: 'import', service: undefined, input: 'input.csv', startedAt: '' } as const;

describe('Recorder', () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  beforeAll(async () => {
    temp = await makeTempDir();
  });
  afterAll(() => temp.cleanup());

  it('counts outcomes, ranks error codes, and stops at --max-errors', async () => {
    const path = join(temp.dir, 'recorder.results.csv');
    const results = await openResults(path, { headers: HEADERS, resume: false, overwrite: false, meta: IMPORT_META });
    let records = 0;
    const recorder = new Recorder({ results, failed: undefined, maxErrors: 3, signal: undefined, onRecord: () => records++ });
    const raw = (row: number) => ({ row, line: row + 1, values: ANA });
    recorder.settle(raw(1), { kind: 'invalid', issues: 'email: required, but empty', list: ['email: required, but empty'] });
    recorder.settle(raw(2), { kind: 'valid', key: 'k2' });
    recorder.settle(raw(3), { kind: 'skipped', key: 'k3' });
    recorder.settle(raw(4), { kind: 'duplicate', key: 'k2', firstRow: 2 });
    recorder.record({ row: 5, outcome: 'failed', errorCode: 'conflict', key: 'k5', values: ANA }, 'conflict');
    expect(recorder.stopped).toBeUndefined();
    expect(recorder.halted()).toBe(false);
    recorder.record({ row: 6, outcome: 'failed', errorCode: 'conflict', key: 'k6', values: ANA }, 'conflict');
    expect(recorder.stopped).toEqual({ reason: 'max_errors', message: 'stopped after 3 errors (--max-errors 3)', code: 'max_errors' });
    expect(recorder.halted()).toBe(true);
    recorder.notAttempted(raw(7));
    await results.close();
    expect(records).toBe(7);
    expect(recorder.counts).toMatchObject({ invalid: 1, valid: 1, skipped: 1, duplicate: 1, failed: 2, not_attempted: 1 });
    expect(recorder.topErrors(5)).toEqual([
      { code: 'conflict', count: 2 },
      { code: 'invalid_row', count: 1 },
    ]);
    // A skipped row keeps its earlier line: six lines for seven outcomes.
    expect((await readResults(path)).map((line) => [line[0], line[1]])).toEqual([
      ['1', 'invalid'],
      ['2', 'valid'],
      ['4', 'duplicate'],
      ['5', 'failed'],
      ['6', 'failed'],
      ['7', 'not_attempted'],
    ]);
  });

  it('an input error stops the run but does not halt sending what was read', async () => {
    const results = await openResults(join(temp.dir, 'input.results.csv'), { headers: HEADERS, resume: false, overwrite: false, meta: IMPORT_META });
    const recorder = new Recorder({ results, failed: undefined, maxErrors: undefined, signal: undefined, onRecord: () => {} });
    recorder.stop('input_error', 'bad byte', 'input_encoding');
    recorder.stop('auth', 'refused', 'auth');
    expect(recorder.stopped?.reason).toBe('input_error');
    expect(recorder.halted()).toBe(false);
    await results.close();
  });
});
