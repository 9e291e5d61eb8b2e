#!/usr/bin/env node
// Generates fixtures/input/: the same client rows saved the way users' tools save them
// (Excel on a European Windows machine, Excel "CSV UTF-8" and "Unicode Text", LibreOffice,
// Google Sheets, a CRM's pipe export, an .xlsx workbook), plus a malformed set. Byte-exact
// and deterministic (the .xlsx zip entry times are pinned).
// Run: node scripts/make-input-fixtures.js
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { windows1252 } from './windows-1252.js';

const out = new URL('../fixtures/input/', import.meta.url);
const bad = new URL('malformed/', out);

/** The logical content of every good fixture (written to expected.json for the tests). */
const HEADERS = ['name', 'email', 'country', 'address', 'currency', 'application_date', 'customer_ref'];
const ROWS = [
  ['Zoë Œuvray-Müller', 'zoe.oeuvray@example.com', 'FR', '12, rue de l’Église', 'EUR', '2024-03-15', '00123'],
  ['Renée “Ren” D’Arcy', 'renee.darcy@example.ie', 'IE', 'Flat 2\nThe Quay', 'EUR', '2024-02-29', '04567'],
  ['José Núñez – Ltd', 'jose.nunez@example.es', 'ES', 'Calle Mayor 5; 2º izq.', 'EUR', '2023-12-01', '00042'],
  ['Björn Ångström', 'bjorn@example.se', 'SE', 'Drottninggatan 1', 'SEK', '2024-01-10', '1234567890123'],
  [
    'Prix €5 — "Le Best" SARL',
    'billing@example.fr',
    'FR',
    'Place d’Italie | Bât. B',
    'EUR',
    '2024-05-05',
    '00007',
  ],
  ['Søren Ørsted', 'soren@example.dk', 'DK', 'Nørregade 3', 'DKK', '2024-06-30', '99'],
  ['Ana Lúcia Gonçalves', 'ana@example.pt', 'PT', 'Rua Augusta, 100', 'EUR', '2024-07-01', '000000'],
];

/**
 * One CSV line. Quoting as the tools do it: only when needed (the delimiter, a quote, a line
 * break) unless `quoteAll` (LibreOffice's "Quote all text cells").
 * @param {string[]} cells @param {{delimiter: string, quoteAll?: boolean}} style
 */
function csvLine(cells, { delimiter, quoteAll = false }) {
  return cells
    .map((cell) =>
      quoteAll || cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell,
    )
    .join(delimiter);
}

/** @param {string[][]} lines @param {{delimiter: string, eol: string, quoteAll?: boolean}} style */
function csv(lines, style) {
  return lines.map((cells) => csvLine(cells, style) + style.eol).join('');
}

/** @param {URL} dir @param {string} name @param {string | Uint8Array} data */
function write(dir, name, data) {
  writeFileSync(new URL(name, dir), data);
  console.log(`fixtures/input/${dir === bad ? 'malformed/' : ''}${name}`);
}

const UTF8_BOM = '\uFEFF';
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);

rmSync(out, { recursive: true, force: true });
mkdirSync(bad, { recursive: true });
writeFileSync(
  new URL('expected.json', out),
  `${JSON.stringify({ headers: HEADERS, rows: ROWS }, null, 2)}\n`,
);

// Excel "CSV (semicolon)" on a French/German Windows: ANSI code page, CRLF, quotes only when
// needed, a used range wider than the data (trailing ;;), empty rows below it, and header
// cells with a stray space and a non-breaking space typed by a user.
const excelHeaders = HEADERS.map((h) => (h === 'email' ? 'email ' : h === 'country' ? 'country\u00a0' : h));
const excelLines = [
  ...[excelHeaders, ...ROWS].map((cells) => [...cells, '', '']),
  Array(HEADERS.length + 2).fill(''),
];
const excel = csv([...excelLines, Array(HEADERS.length + 2).fill('')], { delimiter: ';', eol: '\r\n' });
write(out, 'excel-semicolon-cp1252-crlf.csv', windows1252(excel));
write(out, 'excel-semicolon-cp1252-crlf-sep.csv', windows1252(`sep=;\r\n${excel}`));
// Excel "CSV UTF-8 (Comma delimited)": BOM glued to the first header, CRLF.
write(out, 'utf8-bom.csv', UTF8_BOM + csv([HEADERS, ...ROWS], { delimiter: ',', eol: '\r\n' }));
// Excel "Unicode Text": UTF-16LE with BOM, tab-separated, CRLF.
const unicodeText = csv([HEADERS, ...ROWS], { delimiter: '\t', eol: '\r\n' });
write(out, 'utf16le-tab.txt', Buffer.concat([UTF16LE_BOM, Buffer.from(unicodeText, 'utf16le')]));
// LibreOffice Calc with "Quote all text cells": UTF-8, LF.
write(out, 'libreoffice.csv', csv([HEADERS, ...ROWS], { delimiter: ',', eol: '\n', quoteAll: true }));
// Google Sheets "Download › CSV": UTF-8 without BOM, CRLF, minimal quoting.
write(out, 'google-sheets.csv', csv([HEADERS, ...ROWS], { delimiter: ',', eol: '\r\n' }));
// A CRM export: pipe-delimited UTF-8, LF.
write(out, 'crm-pipe.csv', csv([HEADERS, ...ROWS], { delimiter: '|', eol: '\n' }));

await writeWorkbook();
// fixtures/input/encoding/: UTF-8 files with bytes that are not UTF-8 (removed with the rest above).
await import('./make-encoding-fixtures.js');

// ---- malformed ----------------------------------------------------------------------------
const good = (rows) => csv(rows, { delimiter: ',', eol: '\n' });
// The quote opened on line 4 is never closed: the error must name line 4, not the end.
const plain = ['Eve Adams', 'Finn Berg', 'Gia Conti', 'Hugo Dahl', 'Ines Ek', 'Jan Fox'].map((name, i) => [
  name,
  `${name.split(' ')[0]?.toLowerCase()}@example.com`,
  'GB',
  `${i + 2} High St`,
  'GBP',
  `2024-02-0${i + 1}`,
  `0001${i}`,
]);
const opened = ['Dan Brown', '"dan@example.com', 'US', '1 Main St', 'USD', '2024-01-02', '00011'].join(',');
const head = good([HEADERS, flat(ROWS[0]), flat(ROWS[1])]);
write(bad, 'unbalanced-quote.csv', `${head}${opened}\n${good(plain)}`);
// Same, but a later line has a properly quoted field, whose quote csv-parse takes as the
// (misplaced) closing one: still reported at line 4.
const later = good([
  ...plain.slice(0, 3),
  ['Kai Gray', 'kai@example.com', 'GB', '9, Low St', 'GBP', '2024-03-01', '00020'],
]);
write(bad, 'unbalanced-quote-then-quoted.csv', `${head}${opened}\n${later}`);
// Too many and too few fields: the importer's per-row 'invalid', not the end of the run.
write(
  bad,
  'ragged.csv',
  good([
    HEADERS,
    flat(ROWS[0]),
    [...flat(ROWS[1]), 'extra'],
    flat(ROWS[2]).slice(0, 4),
    [...flat(ROWS[3]), '', ''],
    flat(ROWS[4]),
  ]),
);
// A NUL byte on line 3.
write(bad, 'nul-bytes.csv', good([HEADERS, flat(ROWS[0]), flat(ROWS[1])]).replace('renee', 'ren\0ee'));
write(bad, 'binary.csv', randomBytes(4096, 20261122));
write(
  bad,
  'duplicate-headers.csv',
  good([
    ['name', 'email', 'Email', 'country', 'name'],
    ['A', 'a@x.io', 'b@x.io', 'FR', 'B'],
  ]),
);
write(bad, 'empty.csv', '');
write(bad, 'blank.csv', `${UTF8_BOM}\r\n  \r\n\t\r\n`);
write(bad, 'header-only.csv', csv([HEADERS], { delimiter: ',', eol: '\r\n' }));
// Stand-ins with the right magic bytes: an OLE2 compound file (.xls) and a zip (.ods).
write(bad, 'legacy.xls', Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(504)]));
write(
  bad,
  'calc.ods',
  Buffer.concat([
    Buffer.from('504b0304', 'hex'),
    Buffer.from('mimetypeapplication/vnd.oasis.opendocument.spreadsheet'),
  ]),
);
write(bad, 'workbook-named.csv', Buffer.concat([Buffer.from('504b0304', 'hex'), Buffer.alloc(60)]));

/** A row with its line breaks flattened, for one-record-per-line files. @param {string[] | undefined} row */
function flat(row) {
  return (row ?? []).map((cell) => cell.replaceAll('\n', ' '));
}

/** Deterministic noise (mulberry32) that starts with no known magic number. @param {number} size @param {number} seed */
function randomBytes(size, seed) {
  let state = seed;
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    bytes[i] = (t ^ (t >>> 14)) >>> 24;
  }
  bytes[0] = 0x7f;
  return bytes;
}

/**
 * clients.xlsx as Excel users make it: real date cells, a number padded by its format
 * (00000), leading-zero text, a 13-digit number, a formula with its cached value, rich text,
 * a hyperlink, formatted empty cells right of and below the data; a second sheet of extras.
 */
async function writeWorkbook() {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'ccs-bulk fixtures';
  workbook.created = new Date(Date.UTC(2024, 0, 1));
  workbook.modified = workbook.created;
  const sheet = workbook.addWorksheet('Clients');
  sheet.addRow(HEADERS);
  for (const [i, row] of ROWS.entries()) {
    const [y, m, d] = row[5].split('-').map(Number);
    const values = [...row];
    /** @type {unknown[]} */
    const cells = values;
    cells[5] = new Date(Date.UTC(y, m - 1, d));
    const added = sheet.addRow(cells);
    added.getCell(6).numFmt = i % 2 ? 'dd/mm/yyyy' : 'd-mmm-yy';
  }
  // Row 2 (Zoë): rich text name, hyperlinked e-mail, 123 shown as 00123 by its format.
  sheet.getCell('A2').value = {
    richText: [{ text: 'Zoë ' }, { font: { bold: true }, text: 'Œuvray-Müller' }],
  };
  sheet.getCell('B2').value = {
    text: 'zoe.oeuvray@example.com',
    hyperlink: 'mailto:zoe.oeuvray@example.com',
  };
  sheet.getCell('G2').value = 123;
  sheet.getCell('G2').numFmt = '00000';
  // Row 3 (Renée): currency from a formula, with the value Excel cached.
  sheet.getCell('E3').value = { formula: 'UPPER("eur")', result: 'EUR' };
  // Row 5 (Björn): a long number that Excel would show as 1.23457E+12 in a narrow column.
  sheet.getCell('G5').value = 1234567890123;
  // Row 7 (Søren): a plain number.
  sheet.getCell('G7').value = 99;
  // Formatted but empty cells beyond the data and in a row below it.
  sheet.getCell('J2').fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFFFFF00' } };
  sheet.getCell('C11').border = { top: { style: 'thin' } };

  const extras = workbook.addWorksheet('Extras');
  // Two empty rows first: the header is the first non-empty row.
  extras.getCell('A3').value = 'kind';
  extras.getCell('B3').value = 'value';
  /** @type {Array<[string, unknown, string?]>} */
  const samples = [
    ['datetime', new Date(Date.UTC(2024, 2, 15, 10, 30, 0)), 'yyyy-mm-dd hh:mm'],
    ['boolean', true],
    ['error', { error: '#N/A' }],
    ['float', 0.1 + 0.2],
    ['huge', 1e21],
    ['tiny', 0.0000001],
    ['fixed', -1.5, '0.00'],
    ['date-formula', { formula: 'DATE(2024,2,29)', result: new Date(Date.UTC(2024, 1, 29)) }, 'yyyy-mm-dd'],
    ['number-formula', { formula: '6*7', result: 42 }],
  ];
  for (const [i, [kind, value, numFmt]] of samples.entries()) {
    extras.getCell(`A${i + 4}`).value = kind;
    const cell = extras.getCell(`B${i + 4}`);
    cell.value = /** @type {ExcelJS.CellValue} */ (value);
    if (numFmt) cell.numFmt = numFmt;
  }
  write(out, 'clients.xlsx', pinZipTimes(workbookFirst(Buffer.from(await workbook.xlsx.writeBuffer()))));
}

/**
 * Sets every zip entry's DOS date and time to 2024-01-01 00:00, so that regenerating the
 * workbook gives the same bytes (the CRCs cover the contents only).
 * @param {Buffer} zip
 */
/**
 * Moves xl/workbook.xml to the front, where Excel stores it. exceljs writes it last, and its
 * streaming reader then sometimes parses a worksheet before the workbook ("Cannot read
 * properties of undefined (reading 'sheets')", exceljs#3064): the fixture should be what users
 * have. Each local record is copied whole; the central directory gets the new offsets.
 */
function workbookFirst(zip) {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  const directoryStart = zip.readUInt32LE(end + 16);
  const entries = [];
  for (let i = 0, at = directoryStart; i < count; i++) {
    const length = 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const name = zip.toString('utf8', at + 46, at + 46 + zip.readUInt16LE(at + 28));
    entries.push({ name, central: Buffer.from(zip.subarray(at, at + length)), local: zip.readUInt32LE(at + 42) });
    at += length;
  }
  const byOffset = [...entries].sort((a, b) => a.local - b.local);
  byOffset.forEach((entry, i) => {
    entry.record = zip.subarray(entry.local, byOffset[i + 1]?.local ?? directoryStart);
  });
  const order = [...byOffset.filter((e) => e.name === 'xl/workbook.xml'), ...byOffset.filter((e) => e.name !== 'xl/workbook.xml')];
  const locals = [];
  let offset = 0;
  for (const entry of order) {
    entry.central.writeUInt32LE(offset, 42);
    locals.push(entry.record);
    offset += entry.record.length;
  }
  const directory = Buffer.concat(order.map((entry) => entry.central));
  const tail = Buffer.from(zip.subarray(end));
  tail.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, tail]);
}

function pinZipTimes(zip) {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const entries = zip.readUInt16LE(end + 10);
  const time = 0;
  const date = ((2024 - 1980) << 9) | (1 << 5) | 1;
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i++) {
    zip.writeUInt16LE(time, at + 12);
    zip.writeUInt16LE(date, at + 14);
    const local = zip.readUInt32LE(at + 42);
    zip.writeUInt16LE(time, local + 10);
    zip.writeUInt16LE(date, local + 12);
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return zip;
}
