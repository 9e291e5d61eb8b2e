/**
 * A UTF-8 file with a few bytes that are not UTF-8 is read as UTF-8: each invalid sequence is a
 * U+FFFD in its cell and is named (cell, bytes) on its record; windows-1252 is chosen only when
 * the whole file holds no multi-byte UTF-8 sequence. The fixtures are made by
 * scripts/make-encoding-fixtures.js the way Excel, LibreOffice and `cat` make them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replaceInvalidUtf8 } from '../src/import/read/decode-chunks.js';
import { openRows, type RawRecord, type ReadOptions } from '../src/import/read/index.js';
import { RUNS, TIMEOUT } from './fuzz.helpers.js';
import { ROOT } from './helpers.js';
import { readAll, useInputFiles } from './input.helpers.js';

const { file } = useInputFiles();
const FIXTURES = join(ROOT, 'fixtures', 'input', 'encoding');
/** The rows as typed (scripts/make-encoding-fixtures.js). */
const TYPED = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as { utf8Rows: string[][] };
const UTF8_NAMES = TYPED.utf8Rows.map((row) => row[0]!);

/** Rows holding invalid bytes: row → [its first value, the cells named]. */
function invalidRows(records: RawRecord[]): Record<number, [string, RawRecord['invalidBytes']]> {
  return Object.fromEntries(records.filter((r) => r.invalidBytes).map((r) => [r.row, [r.values[0]!, r.invalidBytes]]));
}

describe('the fixtures, as each program made them', () => {
  it.each<[string, ReadOptions]>([
    ['inline', {}],
    ['on the reader thread', { thread: 'always' }],
  ])('Excel: a UTF-8 file with BOM, one cell pasted as windows-1252 (%s)', async (_, options) => {
    const source = await openRows(join(FIXTURES, 'excel-bom-pasted-cp1252.csv'), options);
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'bom', delimiter: ',' });
    const records = await readAll(source);
    expect(records).toHaveLength(8);
    expect(invalidRows(records)).toEqual({ 4: ['Claire Martin', [{ column: 3, bytes: '0xE9' }]] });
    expect(records[3]?.values[3]).toBe('Avenue R\uFFFDaumur 9, Paris');
    expect(records[0]?.values[0]).toBe('José Müller-Øster');
    expect(source.info.rowsWithInvalidBytes).toBe(1);
  });

  it('LibreOffice: UTF-8 without BOM, ";", one stray byte', async () => {
    const source = await openRows(join(FIXTURES, 'libreoffice-semicolon-stray-byte.csv'));
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'detected', delimiter: ';' });
    const records = await readAll(source);
    expect(invalidRows(records)).toEqual({ 5: ['Renée Dubois', [{ column: 3, bytes: '0xEE' }]] });
    expect(records[4]?.values[3]).toBe('Rue de la Paix 3, N\uFFFDmes');
  });

  it('concatenation: windows-1252 rows after UTF-8 ones are each invalid, never mojibake', async () => {
    const source = await openRows(join(FIXTURES, 'concatenated-utf8-then-cp1252.csv'));
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'detected' });
    const records = await readAll(source);
    expect(records).toHaveLength(16);
    expect(invalidRows(records)).toEqual({
      9: ['\uFFFDmile Zola SARL', [{ column: 0, bytes: '0xC9' }, { column: 3, bytes: '0xC9' }]],
      10: ['Fran\uFFFDois Lef\uFFFDvre', [{ column: 0, bytes: '0xE7' }, { column: 0, bytes: '0xE8' }, { column: 3, bytes: '0x92' }]],
      11: ['J\uFFFDrgen Wei\uFFFD', [{ column: 0, bytes: '0xFC' }, { column: 0, bytes: '0xDF' }, { column: 3, bytes: '0xDF' }, { column: 3, bytes: '0xFC' }]],
      13: ['In\uFFFDs Duval', [{ column: 0, bytes: '0xE8' }]],
      14: ['\uFFFDsa \uFFFDberg', [{ column: 0, bytes: '0xC5' }, { column: 0, bytes: '0xD6' }, { column: 3, bytes: '0xF6' }]],
      15: ['Caf\uFFFD \uFFFDCr\uFFFDme\uFFFD Ltd', [0xe9, 0x93, 0xe8, 0x94].map((b) => ({ column: 0, bytes: `0x${b.toString(16).toUpperCase()}` }))],
    });
    // The ASCII rows of the appended part read the same in either encoding.
    expect(records.filter((r) => !r.invalidBytes).map((r) => r.values[0])).toEqual([...UTF8_NAMES, 'Bob Smith', 'Alice Jones']);
    expect(source.info.rowsWithInvalidBytes).toBe(6);
  });

  it('a pure windows-1252 file is still windows-1252, and says why', async () => {
    const source = await openRows(join(FIXTURES, 'pure-cp1252.csv'));
    expect(source.info).toMatchObject({ encoding: 'windows-1252', encodingSource: 'detected', encodingReason: 'no UTF-8 sequences' });
    const records = await readAll(source);
    expect(invalidRows(records)).toEqual({});
    expect(records.map((r) => r.values[0])).toContain('José Müller-Øster');
    expect(records.map((r) => r.values[0])).toContain('Café “Crème” Ltd');
    expect(records[1]?.values[3]).toBe('12, rue de l’Église, Paris');
  });

  it('a pure UTF-8 file is read as before', async () => {
    const source = await openRows(join(FIXTURES, 'pure-utf8.csv'));
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'detected' });
    expect(source.info.rowsWithInvalidBytes).toBeUndefined();
    const records = await readAll(source);
    expect(records.map((r) => r.values)).toEqual(TYPED.utf8Rows);
    expect(invalidRows(records)).toEqual({});
  });
});

describe('beyond the sniffed 64 KiB', () => {
  const filler = (count: number) => Array.from({ length: count }, (_, i) => `client ${i},c${i}@example.com,${'x'.repeat(30)}\n`).join('');

  it('a stray byte far into a UTF-8 file makes its row invalid, at its line; the rows after it are read', async () => {
    const bytes = Buffer.concat([
      Buffer.from(`name,email,note\nJosé,j@example.com,é\n${filler(3000)}`),
      Buffer.from('Ren\xe9e,r@example.com,late\n', 'latin1'),
      Buffer.from('after,a@example.com,x\n'),
    ]);
    const source = await openRows(await file('late-stray.csv', bytes));
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'detected' });
    const records = await readAll(source);
    expect(records).toHaveLength(3003);
    expect(invalidRows(records)).toEqual({ 3002: ['Ren\uFFFDe', [{ column: 0, bytes: '0xE9' }]] });
    expect(records[3001]?.line).toBe(3003);
    expect(records[3002]?.values).toEqual(['after', 'a@example.com', 'x']);
  });

  it('a stray byte in the sample and the first UTF-8 sequence far in: UTF-8, found by reading on', async () => {
    const bytes = Buffer.concat([
      Buffer.from('name,email,note\n'),
      Buffer.from('Ren\xe9e,r@example.com,early\n', 'latin1'),
      Buffer.from(`${filler(3000)}Zoë,z@example.com,late\n`),
    ]);
    const source = await openRows(await file('late-utf8.csv', bytes));
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'detected' });
    const records = await readAll(source);
    expect(invalidRows(records)).toEqual({ 1: ['Ren\uFFFDe', [{ column: 0, bytes: '0xE9' }]] });
    expect(records.at(-1)?.values[0]).toBe('Zoë');
  });

  it('an ASCII start and UTF-8 far in is UTF-8 [detected]; all ASCII is UTF-8 [default]', async () => {
    const late = await openRows(await file('ascii-then-utf8.csv', `name,email,note\n${filler(3000)}Zoë,z@example.com,x\n`));
    expect(late.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'detected' });
    await late.close();
    const ascii = await openRows(await file('ascii.csv', `name,email,note\n${filler(3000)}`));
    expect(ascii.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'default' });
    await ascii.close();
  });

  it('invalid bytes on every side of a read-chunk boundary, cut sequences included', async () => {
    for (let shift = 0; shift <= 10; shift++) {
      // The pad ends the first line so that the bad bytes straddle the 64 KiB chunk boundary.
      const pad = `é,${'z'.repeat(65_536 - 7 - shift)}\n`;
      const bytes = Buffer.concat([
        Buffer.from(`h,e\n${pad}a`),
        Buffer.from([0xe2, 0x82, 0x2c, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0x0a]),
        Buffer.from('b,€\n'),
      ]);
      const records = await readAll(await openRows(await file(`boundary-${shift}.csv`, bytes)));
      expect(records.map((r) => r.values), `shift ${shift}`).toEqual([
        ['é', pad.slice(2, -1)],
        ['a\uFFFD', '😀\uFFFD'],
        ['b', '€'],
      ]);
      expect(records[1]?.invalidBytes, `shift ${shift}`).toEqual([
        { column: 0, bytes: '0xE2 0x82' },
        { column: 1, bytes: '0xFF' },
      ]);
    }
  });
});

describe('properties', () => {
  it('replacing invalid UTF-8 gives what a (non-fatal) TextDecoder gives, one U+FFFD per replaced sequence', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const { bytes: text, replaced } = replaceInvalidUtf8(bytes);
        const decoded = new TextDecoder().decode(bytes);
        expect(text.toString('utf8')).toBe(decoded);
        expect(replaced).toHaveLength([...decoded].filter((c) => c === '\uFFFD').length);
      }),
      { numRuns: RUNS * 20 },
    );
  });

  /** A cell as pieces: text, or an invalid sequence that cannot join its neighbours. */
  const INVALID = [[0xe9], [0xff], [0x92], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc3]];
  const piece = fc.oneof(
    fc.constantFrom('a', 'é', '€', '😀', ' ', '"', ',', '\n', 'Zoë'),
    fc.constantFrom(...INVALID.keys()).map((k) => INVALID[k]!),
  );
  const cell = fc.array(piece, { maxLength: 6 });

  it('every record holds exactly its invalid bytes, in the right cells, wherever the lines fall', async () => {
    let files = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(cell, { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 20 }), async (rows) => {
        const expected: { values: string[]; invalid: { column: number; bytes: string }[] }[] = [];
        const parts: Buffer[] = [Buffer.from('"é","b"\n')];
        for (const cells of rows) {
          const values: string[] = [];
          const invalid: { column: number; bytes: string }[] = [];
          cells.forEach((pieces, column) => {
            let value = '';
            parts.push(Buffer.from(column === 0 ? '"' : ',"'));
            for (const p of pieces) {
              if (typeof p === 'string') {
                value += p;
                parts.push(Buffer.from(p.replaceAll('"', '""')));
              } else {
                // An ASCII letter after it, so that the next piece cannot continue the sequence.
                value += '\uFFFDx';
                parts.push(Buffer.from(p), Buffer.from('x'));
                invalid.push({ column, bytes: p.map((b) => `0x${b.toString(16).toUpperCase()}`).join(' ') });
              }
            }
            values.push(value);
            parts.push(Buffer.from('"'));
          });
          parts.push(Buffer.from('\r\n'));
          // A row of blanks is no row (an Excel empty row).
          if (values.some((value) => value.trim() !== '')) expected.push({ values, invalid });
        }
        const records = await readAll(await openRows(await file(`property-${++files}.csv`, Buffer.concat(parts))));
        expect(records.map((r) => ({ values: r.values, invalid: r.invalidBytes ?? [] }))).toEqual(expected);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
