/**
 * The .xlsx reader's XML scanner (src/import/read/xml-events.ts) gives the events, and so the
 * records, that htmlparser2's tokenizer gave before it (test/xml-events.reference.ts): on
 * every XML part of every fixture workbook and on random XML, each cut into chunks anywhere.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import yauzl from 'yauzl';
import { describe, expect, it } from 'vitest';
import { readSharedStrings, readStyles, readWorkbook } from '../src/import/read/xlsx-parts.js';
import { sheetHandler } from '../src/import/read/xlsx-sheet.js';
import { type XmlEvents, type XmlHandler, xmlEvents } from '../src/import/read/xml-events.js';
import { openZip, readText } from '../src/import/read/zip-archive.js';
import { RUNS } from './fuzz.helpers.js';
import { ROOT } from './helpers.js';
import { tokenizerEvents } from './xml-events.reference.js';
import { createRandom } from '../src/sandbox/random.js';

type Events = (handler: XmlHandler) => XmlEvents;

/** Every event as a line, text between two tags as one line however many pieces it came in. */
function eventLog(events: Events, chunks: readonly string[], filtered: boolean): string[] {
  const log: string[] = [];
  let text: string | undefined;
  const flush = () => {
    if (text !== undefined) log.push(`text ${JSON.stringify(text)}`);
    text = undefined;
  };
  const handler: XmlHandler = {
    // Filtered as the sheet reads: three attributes, text only inside <v> and <t>.
    wantText: !filtered,
    open(name, attributes) {
      flush();
      log.push(`open ${name} ${JSON.stringify(attributes)}`);
      if (filtered) handler.wantText = name === 'v' || name === 't';
    },
    close(name) {
      flush();
      log.push(`close ${name}`);
      if (filtered) handler.wantText = false;
    },
    // An empty piece (the tokenizer's for `<![CDATA[]]>`) adds nothing to any text.
    text(value) {
      if (value !== '') text = (text ?? '') + value;
    },
  };
  if (filtered) handler.attributes = new Set(['r', 't', 's']);
  const parser = events(handler);
  for (const chunk of chunks) parser.write(chunk);
  parser.end();
  flush();
  return log;
}

/** `text` cut at `cuts` (any numbers: taken modulo its length). */
function cut(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((position) => position % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const position of at) {
    chunks.push(text.slice(from, position));
    from = position;
  }
  chunks.push(text.slice(from));
  return chunks;
}

function expectSameEvents(text: string, chunkings: readonly (readonly string[])[]): void {
  for (const filtered of [false, true]) {
    const expected = eventLog(tokenizerEvents, [text], filtered);
    for (const chunks of chunkings) expect(eventLog(xmlEvents, chunks, filtered)).toEqual(expected);
  }
}

/** Chunks of 1 character, and of random sizes up to 64. */
function chunkings(text: string, seed: number): string[][] {
  const next = createRandom(seed);
  const sizes: number[] = [];
  for (let at = 0; at < text.length; at += 1 + Math.floor(next() * 64)) sizes.push(at);
  return [text.split(''), cut(text, sizes)];
}

const FIXTURE_DIRS = ['fixtures/input', 'fixtures/input/sheets', 'fixtures/fix-it', 'fixtures/reports'];
const WORKBOOKS = FIXTURE_DIRS.flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith('.xlsx') && name !== 'protected.xlsx')
    .map((name) => join(dir, name)),
);

/** The names of a zip's XML parts. */
function xmlParts(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const names: string[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        if (/\.(xml|rels)$/.test(entry.fileName)) names.push(entry.fileName);
        zip.readEntry();
      });
      zip.once('end', () => resolve(names));
      zip.once('error', reject);
      zip.readEntry();
    });
  });
}

describe('fixture workbooks (Excel, LibreOffice, openpyxl, exceljs, SheetJS)', () => {
  it('there are workbooks from each producer', () => {
    expect(WORKBOOKS.length).toBeGreaterThanOrEqual(12);
  });

  it.each(WORKBOOKS)('%s: every XML part gives the same events, whole and in chunks', async (name) => {
    const file = join(ROOT, name);
    const zip = await openZip(file);
    try {
      const parts = await xmlParts(file);
      expect(parts.length).toBeGreaterThan(3);
      for (const [index, part] of parts.entries()) {
        const text = await readText(zip, zip.entry(part)!, file);
        expectSameEvents(text, [[text], ...chunkings(text, index + 1)]);
      }
    } finally {
      zip.close();
    }
  });

  it.each(WORKBOOKS)('%s: every sheet gives the same records, whole and in chunks', async (name) => {
    const file = join(ROOT, name);
    const zip = await openZip(file);
    try {
      const workbook = (await readWorkbook(zip, file))!;
      const base = {
        file,
        date1904: workbook.date1904,
        formats: await readStyles(zip, workbook.styles, file),
        shared: await readSharedStrings(zip, workbook.sharedStrings, file),
      };
      for (const sheet of workbook.sheets) {
        if (sheet.entry === undefined) continue;
        const text = await readText(zip, sheet.entry, file);
        const records = (events: Events, chunks: readonly string[]) => {
          const handler = sheetHandler({ ...base, sheet: sheet.name });
          const parser = events(handler);
          for (const chunk of chunks) parser.write(chunk);
          parser.end();
          return handler.take();
        };
        const expected = records(tokenizerEvents, [text]);
        expect(expected.length).toBeGreaterThan(0);
        for (const chunks of chunkings(text, 7)) expect(records(xmlEvents, chunks)).toEqual(expected);
      }
    } finally {
      zip.close();
    }
  });
});

/** Random XML: what a worksheet may hold, and the odd forms XML allows. */
function randomXml(next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const space = () => pick(['', ' ', '  ', '\n', '\t', '\r\n']);
  const some = (make: () => string, most: number) => Array.from({ length: Math.floor(next() * (most + 1)) }, make).join('');
  const reference = () =>
    pick(['&amp;', '&lt;', '&gt;', '&quot;', '&apos;', '&#65;', '&#x41;', '&#X1F600;', '&#00065;', '&#127;', '&#xa0;',
      '&#0;', '&#xD800;', '&#1114112;', '&bogus;', '&amp', '& ', '&#;', '&#x;', '&#65x;', '&&amp;', '&AMP;']);
  const char = () => pick(['a', 'Z', '0', ' ', '\n', '\t', 'é', '€', '😀', '>', '"', "'", ';', '#', ']', '-', '_x000D_']);
  const textRun = () => some(() => (next() < 0.2 ? reference() : char()), 12);
  const name = () => pick(['row', 'c', 'v', 't', 'is', 'si', 'x:row', 'x:c', 'x:v', 'r', 'rPh', '_a', 'ns1:b.c-d', 'é']);
  const attribute = () => {
    const quote = pick(['"', "'"]);
    const value = some(() => (next() < 0.2 ? reference() : pick(['a', '1', ' ', '>', '/', '=', '\n', quote === '"' ? "'" : '"'])), 8);
    return `${pick([' ', '\n', '\t ', '  '])}${pick(['r', 't', 's', 'x:r', 'x14ac:dyDescent', 'spans', 'xml:space', 'id'])}${space()}=${space()}${quote}${value}${quote}`;
  };
  const misc = () =>
    pick([
      () => `<!--${some(() => pick(['a', '-', ' ', '<', '>', '&amp;', ']]>']) , 6)}a-->`,
      () => `<![CDATA[${some(() => pick(['a', ']', ']]', '<', '>', '&amp;', '<v>', ' ', '-->']), 8)}]]>`,
      () => `<?${pick(['pi', 'mso-application'])}${some(() => pick(['a', ' ', '"', '?', '<']), 6)}?>`,
    ])();
  const element = (depth: number): string => {
    const tag = name();
    const attributes = some(attribute, 3);
    if (next() < 0.25) return `<${tag}${attributes}${space()}/>`;
    const content = some(() => (depth > 0 && next() < 0.5 ? element(depth - 1) : next() < 0.2 ? misc() : textRun()), 4);
    return `<${tag}${attributes}${space()}>${content}</${tag}${space()}>`;
  };
  const prolog = next() < 0.5 ? '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' : '';
  const doctype = next() < 0.1 ? '<!DOCTYPE worksheet>' : '';
  return `${prolog}${doctype}${some(misc, 1)}${element(4)}${some(misc, 1)}`;
}

describe('random XML', () => {
  it('gives the same events whole and cut anywhere (tags, quotes, references, CDATA, comments)', () => {
    fc.assert(
      fc.property(fc.integer(), fc.array(fc.nat(), { maxLength: 40 }), (seed, cuts) => {
        const text = randomXml(createRandom(seed));
        expectSameEvents(text, [[text], cut(text, cuts), text.split('')]);
      }),
      { numRuns: Math.max(400, RUNS) },
    );
  });

  it('decodes references as before, in text and in attributes', () => {
    const text = '<a v="&lt;&#x41;&#8364;&amp">&#65;&#x1F600;&#0;&#xD800;&#1114112;&quot;&bogus;&#65x;&amp</a>';
    expect(eventLog(xmlEvents, [text], false)).toEqual([
      'open a {"v":"<A€&amp"}',
      `text ${JSON.stringify('A😀\uFFFD\uFFFD\uFFFD"&bogus;&#65x;&amp')}`,
      'close a',
    ]);
    expectSameEvents(text, chunkings(text, 3));
  });

  it('reads &#128;–&#159; as those code points, as XML does (the tokenizer before read them as Windows-1252)', () => {
    const text = '<a v="&#128;">&#x80;&#159;&#x9F;</a>';
    expect(eventLog(xmlEvents, [text], false)).toEqual(['open a {"v":"\u0080"}', `text ${JSON.stringify('\u0080\u009f\u009f')}`, 'close a']);
    expect(eventLog(tokenizerEvents, [text], false)).toContain('open a {"v":"€"}');
  });

  it('a tag, a comment and CDATA longer than many chunks', () => {
    const long = 'x'.repeat(200_000);
    const text = `<r><c a="${long}"/><!--${long}--><v><![CDATA[${long}]]></v></r>`;
    expectSameEvents(text, [cut(text, Array.from({ length: 200 }, (_, i) => i * 3001))]);
  });
});
