/**
 * Bench inputs, deterministic by row number: a client CSV in the mixed forms users have
 * (country names and alpha-3 codes, quoted commas and quotes, unicode), and for each row the
 * exact wire body ccs-bulk sends for it, so the floor loop signs and posts the same bytes.
 */
import { closeSync, createReadStream, openSync, writeFileSync, writeSync } from 'node:fs';
import { parse } from 'csv-parse';

export const HEADER = ['Name', 'E-mail', 'Country', 'Address', 'Currency', 'Application Date'];

const FIRST = ['Anna', 'José', 'Zoë', 'Łukasz', 'Søren', 'Chloé', 'Mehmet', 'Aiko', 'Olumide', 'Priya'];
const LAST = ['Müller', 'García', "O'Brien", 'Kowalski', 'Dubois', 'Rossi', 'Tanaka', 'Sharma', 'Groß'];
const COMPANIES = ['Acme Trading', 'Smith, Jones and Partners', '"Best" Imports Ltd', 'Zürich Holdings AG'];
/** [as written in the file, as sent (alpha-2), currency] */
const COUNTRIES = [
  ['DE', 'DE', 'EUR'],
  ['Germany', 'DE', 'EUR'],
  ['FRA', 'FR', 'EUR'],
  ['France', 'FR', 'EUR'],
  ['gb', 'GB', 'GBP'],
  ['United Kingdom', 'GB', 'GBP'],
  ['US', 'US', 'USD'],
  ['JPN', 'JP', 'JPY'],
  ['Switzerland', 'CH', 'CHF'],
  ['PL', 'PL', 'PLN'],
];
const STREETS = ['Hauptstraße', 'Rue de Rivoli', 'Calle Mayor', 'Baker Street', 'Łąkowa', 'Strandvägen'];
const CITIES = ['Berlin', 'Paris', 'Madrid', 'London', 'Kraków', 'Stockholm', 'Tokyo', 'Zürich'];
const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2020, 0, 1);

const at = (items, i) => items[i % items.length];

/** Row `i` (0-based): the file's cells and the normalized values ccs-bulk sends. */
export function clientRow(i) {
  const first = at(FIRST, i);
  const last = at(LAST, Math.floor(i / FIRST.length));
  const name = i % 7 === 3 ? `${at(COMPANIES, i)} ${i}` : `${first} ${last}`;
  const local = `${first}.${last}`.normalize('NFKD').replace(/[^A-Za-z.]/g, '');
  const email = `${local.toLowerCase()}.${i}@example.com`;
  const [countryCell, country, currency] = at(COUNTRIES, i);
  const address = `${(i % 240) + 1} ${at(STREETS, i)}, ${10000 + (i % 89999)} ${at(CITIES, i)}`;
  const date = new Date(FIRST_DAY + ((i * 7) % 2000) * DAY_MS).toISOString().slice(0, 10);
  return {
    cells: [name, email, countryCell, address, currency, date],
    sent: { name, email, country, address, currency, application_date: date },
  };
}

function csvCell(value) {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** What `invalidEvery` puts in a row, in turn: each a different check that fails. */
const BREAKS = [
  (cells) => [cells[0], cells[1], 'Germny', ...cells.slice(3)],
  (cells) => [cells[0], cells[1].replace('@', ' at '), ...cells.slice(2)],
  (cells) => [...cells.slice(0, 3), '', ...cells.slice(4)],
  (cells) => [...cells.slice(0, 4), 'EURO', cells[5]],
  (cells) => [...cells.slice(0, 5), '2024-02-30'],
];

/**
 * Writes `rows` client rows (plus the header) to `path`, in 1 MB-ish chunks; with
 * `invalidEvery: N`, every Nth row fails one check (the review page's bench: 1M rows, N = 10).
 */
export function writeClientsCsv(path, rows, { invalidEvery } = {}) {
  const fd = openSync(path, 'w', 0o600);
  try {
    writeSync(fd, `${HEADER.join(',')}\n`);
    let chunk = '';
    for (let i = 0; i < rows; i++) {
      const { cells } = clientRow(i);
      const broken = invalidEvery && i % invalidEvery === invalidEvery - 1 ? BREAKS[Math.floor(i / invalidEvery) % BREAKS.length](cells) : cells;
      chunk += `${broken.map(csvCell).join(',')}\n`;
      if (chunk.length > 1_000_000) {
        writeSync(fd, chunk);
        chunk = '';
      }
    }
    writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

/** The wire body, in the field order ccs-bulk serializes (the exact bytes are signed: docs/service.md#signing). */
export function wireBody(sent, key) {
  return JSON.stringify({
    name: sent.name,
    idempotency_key: key,
    email: sent.email,
    country: sent.country,
    address: sent.address,
    currency: sent.currency,
    liquidity_type: 'chain',
    application_date: sent.application_date,
  });
}

/**
 * Writes one wire body per line (JSON has no raw newline) for the rows of a `validate`
 * results file, with the idempotency keys ccs-bulk derived. Returns the count written.
 */
export async function writeBodies(resultsPath, bodiesPath) {
  const lines = [];
  const results = createReadStream(resultsPath).pipe(parse({ columns: true }));
  for await (const result of results) {
    if (result.outcome !== 'valid') throw new Error(`row ${result.row} is ${result.outcome}, not valid`);
    const index = Number(result.row) - 1;
    lines[index] = wireBody(clientRow(index).sent, result.idempotency_key);
  }
  writeFileSync(bodiesPath, `${lines.join('\n')}\n`, { mode: 0o600 });
  return lines.length;
}

/** The rows of writeClientsCsv as an .xlsx (exceljs' streaming writer, shared strings). */
export async function writeClientsXlsx(path, rows) {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: true, useStyles: false });
  const sheet = workbook.addWorksheet('Clients');
  sheet.addRow(HEADER).commit();
  for (let i = 0; i < rows; i++) sheet.addRow(clientRow(i).cells).commit();
  sheet.commit();
  await workbook.commit();
}
