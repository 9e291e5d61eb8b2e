/** Encodings: BOMs, detection, the windows-1252 specials, overrides, faults named by line. */
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../src/errors.js';
import { decodeWindows1252 } from '../src/import/read/decode-text.js';
import { detectEncoding, firstInvalidUtf8 } from '../src/import/read/detect-encoding.js';
import { openRows } from '../src/import/read/index.js';
import { readAll, useInputFiles } from './input.helpers.js';

const { file } = useInputFiles();

describe('windows-1252', () => {
  // Node 20's TextDecoder maps these to C1 controls on its latin1 fast path: check ours does not.
  it.each([
    [0x80, '€'],
    [0x82, '‚'],
    [0x85, '…'],
    [0x8c, 'Œ'],
    [0x91, '‘'],
    [0x92, '’'],
    [0x93, '“'],
    [0x94, '”'],
    [0x96, '–'],
    [0x97, '—'],
    [0x99, '™'],
    [0x9c, 'œ'],
    [0x9f, 'Ÿ'],
    [0xe9, 'é'],
    [0xa0, '\u00a0'],
  ])('byte 0x%s decodes to %s', (byte, char) => {
    expect(decodeWindows1252(new Uint8Array([byte]))).toBe(char);
  });

  it('reads an ANSI file from Excel with its specials, detected without a flag', async () => {
    const bytes = Buffer.from(
      'name;note\r\nCaf\xe9 \x80;\x93quoted\x94 \x96 \x97 \x8cuvre \x91x\x92\r\n',
      'latin1',
    );
    const source = await openRows(await file('ansi.csv', bytes));
    expect(source.info).toMatchObject({
      encoding: 'windows-1252',
      encodingSource: 'detected',
      delimiter: ';',
    });
    expect((await readAll(source))[0]?.values).toEqual(['Café €', '“quoted” – — Œuvre ‘x’']);
  });

  it('is what the latin1 / iso-8859-1 labels mean (WHATWG)', async () => {
    const bytes = Buffer.from('name\r\n\x80 \x8c\r\n', 'latin1');
    const source = await openRows(await file('latin1.csv', bytes), { encoding: 'latin1' });
    expect(source.info).toMatchObject({ encoding: 'windows-1252', encodingSource: 'option' });
    expect((await readAll(source))[0]?.values).toEqual(['€ Œ']);
  });
});

describe('detection', () => {
  it.each([
    ['utf-8 BOM', [0xef, 0xbb, 0xbf, 0x61], 'utf-8', 'bom', 3],
    ['utf-16le BOM', [0xff, 0xfe, 0x61, 0x00], 'utf-16le', 'bom', 2],
    ['utf-16be BOM', [0xfe, 0xff, 0x00, 0x61], 'utf-16be', 'bom', 2],
    ['ascii', [0x61, 0x2c, 0x62, 0x0a], 'utf-8', 'default', 0],
    ['valid utf-8', [0x43, 0x61, 0x66, 0xc3, 0xa9], 'utf-8', 'detected', 0],
    ['invalid utf-8', [0x43, 0x61, 0x66, 0xe9, 0x0a], 'windows-1252', 'detected', 0, 'no UTF-8 sequences'],
    ['utf-8 and a stray byte', [0x43, 0xc3, 0xa9, 0x2c, 0xe9, 0x0a], 'utf-8', 'detected', 0],
    ['utf-16le without BOM', [...Buffer.from('name,email\n', 'utf16le')], 'utf-16le', 'detected', 0],
  ])('%s', (_, bytes, encoding, source, bomLength, reason?: string) => {
    expect(detectEncoding(new Uint8Array(bytes as number[]), undefined, true)).toEqual({
      encoding,
      source,
      bomLength,
      ...(reason !== undefined && { reason }),
    });
  });

  it('accepts a UTF-8 sequence cut by the end of the sample, not by the end of the file', () => {
    const cut = new Uint8Array([0x61, 0xc3]);
    expect(detectEncoding(cut, undefined, false).encoding).toBe('utf-8');
    expect(detectEncoding(cut, undefined, true).encoding).toBe('windows-1252');
  });

  it('finds the first byte that breaks UTF-8', () => {
    expect(firstInvalidUtf8(Buffer.from('aé€😀'), false)).toBe(-1);
    expect(firstInvalidUtf8(new Uint8Array([0x61, 0xc0, 0x80]), false)).toBe(1); // overlong
    expect(firstInvalidUtf8(new Uint8Array([0x61, 0xed, 0xa0, 0x80]), false)).toBe(1); // surrogate
    expect(firstInvalidUtf8(new Uint8Array([0x61, 0x62, 0xe9, 0x63]), false)).toBe(2);
  });

  it('the option wins over detection, and rejects an unknown label as a usage error', () => {
    expect(detectEncoding(Buffer.from('abc'), 'UTF-16', true)).toMatchObject({
      encoding: 'utf-16le',
      source: 'option',
    });
    expect(() => detectEncoding(Buffer.from('abc'), 'klingon', true)).toThrow(UsageError);
  });
});

describe('UTF-16', () => {
  it('reads UTF-16BE with a BOM', async () => {
    const text = 'name\tcity\r\nZoë\tKøbenhavn\r\n';
    const be = Buffer.from(text, 'utf16le').swap16();
    const source = await openRows(await file('be.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), be])));
    expect(source.info).toMatchObject({ encoding: 'utf-16be', encodingSource: 'bom', delimiter: '\t' });
    expect(source.headers).toEqual(['name', 'city']);
    expect((await readAll(source))[0]?.values).toEqual(['Zoë', 'København']);
  });

  it('reads UTF-16LE without a BOM (its NUL pattern), instead of refusing NUL bytes', async () => {
    const source = await openRows(await file('le.csv', Buffer.from('name,city\nZoë,Paris\n', 'utf16le')));
    expect(source.info).toMatchObject({ encoding: 'utf-16le', encodingSource: 'detected' });
    expect((await readAll(source))[0]?.values).toEqual(['Zoë', 'Paris']);
  });

  it('decodes characters split across read chunks', async () => {
    // 64 KiB chunks: an odd prefix puts a UTF-16 code unit across the chunk boundary.
    const rows = Array.from({ length: 4000 }, (_, i) => `Zoë ${i},😀${i}`).join('\r\n');
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`n,e\r\n${rows}\r\n`, 'utf16le')]);
    const records = await readAll(await openRows(await file('split.txt', bytes)));
    expect(records).toHaveLength(4000);
    expect(records[3999]?.values).toEqual(['Zoë 3999', '😀3999']);
  });
});

describe('UTF-8', () => {
  it('decodes multi-byte characters split across read chunks', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `Œuvre ${i},€${i}😀`).join('\n');
    const records = await readAll(await openRows(await file('split8.csv', `a,b\n${rows}\n`)));
    expect(records).toHaveLength(5000);
    expect(records.every((r, i) => r.values[0] === `Œuvre ${i}` && r.values[1] === `€${i}😀`)).toBe(true);
  });

  it('a file ASCII in its sniffed start and windows-1252 after it is windows-1252: the rest is looked at', async () => {
    // The first 64 KiB are ASCII; line 2002 then holds an ANSI é, and no UTF-8 follows.
    const lines = Array.from({ length: 2000 }, (_, i) => `client ${i},c${i}@example.com,${'x'.repeat(20)}`);
    const bytes = Buffer.concat([
      Buffer.from(`name,email,note\n${lines.join('\n')}\n`),
      Buffer.from('Ren\xe9e,r@example.com,late\n', 'latin1'),
      Buffer.from('after,a@example.com,x\n'),
    ]);
    const source = await openRows(await file('late-ansi.csv', bytes));
    expect(source.info).toMatchObject({ encoding: 'windows-1252', encodingSource: 'detected', encodingReason: 'no UTF-8 sequences' });
    const records = await readAll(source);
    expect(records).toHaveLength(2002);
    expect(records[2000]).toEqual({ row: 2001, line: 2002, values: ['Renée', 'r@example.com', 'late'] });
  });

  it('--encoding windows-1252 reads that same file', async () => {
    const bytes = Buffer.concat([
      Buffer.from('name,email\n'),
      Buffer.from('Ren\xe9e,r@example.com\n', 'latin1'),
    ]);
    const source = await openRows(await file('ansi-forced.csv', bytes), { encoding: 'windows-1252' });
    expect((await readAll(source))[0]?.values).toEqual(['Renée', 'r@example.com']);
  });

  it('a forced 8-bit --encoding on a UTF-16 file is refused with a hint, not read as garbage', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('name\tcity\r\nA\tB\r\n', 'utf16le'),
    ]);
    const error = await openRows(await file('utf16-forced.txt', bytes), { encoding: 'windows-1252' }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'input_binary', line: 1 });
    expect((error as Error).message).toContain('(or is --encoding wrong for it?)');
  });

  it('--encoding utf-8 on an ANSI file: the rows with invalid bytes carry them, as when UTF-8 is detected', async () => {
    const bytes = Buffer.concat([
      Buffer.from('name,email\nok,o@x.io\n'),
      Buffer.from('Ren\xe9e,r@x.io\n', 'latin1'),
      Buffer.from('after,a@x.io\n'),
    ]);
    const source = await openRows(await file('forced-utf8.csv', bytes), { encoding: 'utf-8' });
    expect(await readAll(source)).toEqual([
      { row: 1, line: 2, values: ['ok', 'o@x.io'] },
      { row: 2, line: 3, values: ['Ren\uFFFDe', 'r@x.io'], invalidBytes: [{ column: 0, bytes: '0xE9' }] },
      { row: 3, line: 4, values: ['after', 'a@x.io'] },
    ]);
    expect(source.info).toMatchObject({ encoding: 'utf-8', encodingSource: 'option', rowsWithInvalidBytes: 1 });
  });

  it('a broken UTF-16 file still stops at its line (input_encoding): only UTF-8 is judged row by row', async () => {
    // An unpaired high surrogate (D800) before the line break of line 3.
    const text = Buffer.from('name,email\r\nok,o@x.io\r\nbad,b@x.io', 'utf16le');
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), text, Buffer.from([0x00, 0xd8]), Buffer.from('\r\n', 'utf16le')]);
    // Named at the line its chunk reached (the whole of this small file).
    const error = await openRows(await file('broken-utf16.csv', bytes)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ code: 'input_encoding' });
    expect((error as Error).message).toContain('not valid utf-16le');
  });
});
