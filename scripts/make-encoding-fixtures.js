#!/usr/bin/env node
// Generates fixtures/input/encoding/: UTF-8 files with a few bytes that are not UTF-8, made
// the way real programs make them, plus a pure windows-1252 and a pure UTF-8 file. Byte-exact
// and deterministic. Run: node scripts/make-encoding-fixtures.js (make-input-fixtures.js runs it too).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { windows1252 } from './windows-1252.js';

const out = new URL('../fixtures/input/encoding/', import.meta.url);

const HEADERS = ['name', 'email', 'country', 'address', 'currency'];
/** Clients typed in a UTF-8 spreadsheet: letters windows-1252 has, and some it has not (Ł, ğ, İ). */
const UTF8_ROWS = [
  ['José Müller-Øster', 'jose.muller@example.de', 'DE', 'Königstraße 12, Stuttgart', 'EUR'],
  ['Zoë Œuvray', 'zoe@example.fr', 'FR', '12, rue de l’Église, Paris', 'EUR'],
  ['Søren Ångström', 'soren@example.dk', 'DK', 'Nørregade 3, København', 'DKK'],
  ['Claire Martin', 'claire@example.fr', 'FR', 'Avenue Réaumur 9, Paris', 'EUR'],
  ['Renée Dubois', 'renee@example.fr', 'FR', 'Rue de la Paix 3, Nîmes', 'EUR'],
  ['Plain Client', 'plain@example.com', 'GB', '1 High Street, London', 'GBP'],
  ['Łukasz Wąsik', 'lukasz@example.pl', 'PL', 'ul. Długa 5, Gdańsk', 'PLN'],
  ['Çağla Yıldız', 'cagla@example.tr', 'TR', 'İstiklal Cad. 10, İstanbul', 'TRY'],
];
/** Clients kept in Excel on a Western-European Windows machine (every letter in windows-1252). */
const ANSI_ROWS = [
  ['Émile Zola SARL', 'emile@example.fr', 'FR', 'Rue Émile 2, Paris', 'EUR'],
  ['François Lefèvre', 'francois@example.fr', 'FR', 'Quai d’Orsay 1, Paris', 'EUR'],
  ['Jürgen Weiß', 'jurgen@example.de', 'DE', 'Hauptstraße 5, München', 'EUR'],
  ['Bob Smith', 'bob@example.com', 'US', '10 Main St, Springfield', 'USD'],
  ['Inès Duval', 'ines@example.fr', 'FR', '12 Rue Sainte-Anne, Paris', 'EUR'],
  ['Åsa Öberg', 'asa@example.se', 'SE', 'Storgatan 1, Malmö', 'SEK'],
  ['Café “Crème” Ltd', 'cafe@example.co.uk', 'GB', '5 Market Sq, Oxford', 'GBP'],
  ['Alice Jones', 'alice@example.com', 'GB', '2 Park Lane, Leeds', 'GBP'],
];

/** Quoting only when needed, as Excel, LibreOffice and Google Sheets do. @param {string} cell @param {string} delimiter */
function quote(cell, delimiter) {
  return cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/**
 * One CSV record per row, each cell's bytes from `encode(text, row, column)`.
 * @param {string[][]} rows
 * @param {{delimiter: string, eol: string, encode?: (text: string, row: number, column: number) => Buffer}} style
 */
function csv(rows, { delimiter, eol, encode = (text) => Buffer.from(text) }) {
  const separator = Buffer.from(delimiter);
  return Buffer.concat(
    rows.flatMap((cells, r) => [
      ...cells.flatMap((cell, c) => [...(c > 0 ? [separator] : []), encode(quote(cell, delimiter), r, c)]),
      Buffer.from(eol),
    ]),
  );
}

/** @param {string} name @param {string | Uint8Array} data */
function write(name, data) {
  writeFileSync(new URL(name, out), data);
  console.log(`fixtures/input/encoding/${name}`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// The rows as typed, for the tests: what each fixture must send (or name as invalid).
write('expected.json', `${JSON.stringify({ headers: HEADERS, utf8Rows: UTF8_ROWS, ansiRows: ANSI_ROWS }, null, 2)}\n`);

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const utf8Table = [HEADERS, ...UTF8_ROWS];

// Excel "CSV UTF-8 (Comma delimited)": BOM, CRLF. Claire Martin's address was pasted from a
// windows-1252 source (an old ANSI export opened as text), so its é is the single byte 0xE9.
const claire = UTF8_ROWS.findIndex((row) => row[0] === 'Claire Martin') + 1;
write(
  'excel-bom-pasted-cp1252.csv',
  Buffer.concat([
    BOM,
    csv(utf8Table, {
      delimiter: ',',
      eol: '\r\n',
      encode: (cell, r, c) => (r === claire && c === 3 ? windows1252(cell) : Buffer.from(cell)),
    }),
  ]),
);

// LibreOffice Calc "Text CSV", field delimiter ";", UTF-8 without BOM, LF; Renée's address
// was then touched up in an editor set to Latin-1, which wrote î as the one byte 0xEE.
const renee = UTF8_ROWS.findIndex((row) => row[0] === 'Renée Dubois') + 1;
write(
  'libreoffice-semicolon-stray-byte.csv',
  csv(utf8Table, {
    delimiter: ';',
    eol: '\n',
    encode: (cell, r, c) => (r === renee && c === 3 ? windows1252(cell) : Buffer.from(cell)),
  }),
);

// `cat clients-2024.csv <(tail -n +2 clients-2025.csv)`: a Google Sheets download (UTF-8, no
// BOM, CRLF) with the rows of an Excel "CSV (Comma delimited)" file (windows-1252, CRLF)
// appended without their header.
write(
  'concatenated-utf8-then-cp1252.csv',
  Buffer.concat([csv(utf8Table, { delimiter: ',', eol: '\r\n' }), csv(ANSI_ROWS, { delimiter: ',', eol: '\r\n', encode: windows1252 })]),
);

// Excel "CSV (Comma delimited)" on Windows: windows-1252 throughout, CRLF.
const ansiTable = [HEADERS, UTF8_ROWS[0], UTF8_ROWS[1], UTF8_ROWS[3], ...ANSI_ROWS];
write('pure-cp1252.csv', csv(ansiTable, { delimiter: ',', eol: '\r\n', encode: windows1252 }));

// Google Sheets "Download › CSV": UTF-8 throughout, CRLF.
write('pure-utf8.csv', csv(utf8Table, { delimiter: ',', eol: '\r\n' }));
