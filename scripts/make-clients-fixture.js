#!/usr/bin/env node
// Generates fixtures/clients.csv: a realistic, deterministic sample for the demo and tests.
// ~300 rows with unicode names, quoted commas and newlines, country names and codes in
// mixed forms, some invalid rows and some duplicates on purpose (listed in the comments below).
import { writeFileSync } from 'node:fs';
import { stringify } from 'csv-stringify/sync';

let state = 20261122;
const random = () => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (items) => items[Math.floor(random() * items.length)];

const first = [
  'Anna',
  'José',
  'Zoë',
  'Łukasz',
  'Søren',
  'Chloé',
  'Mehmet',
  'Aiko',
  'Olumide',
  'Björk',
  'Nguyễn',
  'Siobhán',
  'François',
  'Ana-María',
  'Dmitri',
  'Priya',
  'Wei',
  'Fatima',
  'Jürgen',
  'Ingrid',
];
const last = [
  'Müller',
  'García',
  "O'Brien",
  'Kowalski',
  'Dubois',
  'Rossi',
  'Yılmaz',
  'Tanaka',
  'Adeyemi',
  'Jónsdóttir',
  'Văn An',
  'Ní Bhriain',
  'Lefèvre',
  'de la Cruz',
  'Ivanova',
  'Sharma',
  'Zhang',
  'Haddad',
  'Groß',
  'Lindqvist',
];
const companies = [
  'Acme Trading',
  'Nordlicht GmbH',
  'Café & Co',
  'Smith, Jones and Partners',
  'Zürich Holdings AG',
  'Société Générale des Eaux',
  '"Best" Imports Ltd',
  'Tōkyō Shōji K.K.',
];
const countries = [
  ['Germany', 'EUR'],
  ['DE', 'EUR'],
  ['FRA', 'EUR'],
  ['France', 'EUR'],
  ['ES', 'EUR'],
  ['Spain', 'EUR'],
  ['gb', 'GBP'],
  ['United Kingdom', 'GBP'],
  ['US', 'USD'],
  ['United States of America', 'USD'],
  ['JP', 'JPY'],
  ['Japan', 'JPY'],
  ['CH', 'CHF'],
  ['Switzerland', 'CHF'],
  ['PL', 'PLN'],
  ['Poland', 'PLN'],
  ['SE', 'SEK'],
  ['TUR', 'TRY'],
  ['NG', 'NGN'],
  ['IN', 'INR'],
  ['Ireland', 'EUR'],
  ['VN', 'VND'],
];
const streets = [
  'Hauptstraße 5',
  'Rue de Rivoli 12',
  'Calle Mayor 3, 2º izq.',
  '221B Baker Street',
  'Łąkowa 7/4',
  'Strandvägen 1',
  '1-2-3 Shibuya',
  'Bahnhofstrasse 10\nPostfach 42',
];
const cities = [
  'Berlin',
  'Paris',
  'Madrid',
  'London',
  'Kraków',
  'Stockholm',
  'Tokyo',
  'Zürich',
  'Lagos',
  'Mumbai',
];

const header = [
  'Name',
  'E-mail',
  'Country',
  'Address',
  'Currency',
  'Application Date',
  'Customer Ref',
  'Notes',
];
const rows = [];
const ascii = (s) =>
  s
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

for (let i = 1; i <= 290; i++) {
  const person = `${pick(first)} ${pick(last)}`;
  const name = i % 7 === 0 ? `${pick(companies)}` : person;
  const [country, currency] = pick(countries);
  const address = `${pick(streets)}, ${pick(cities)}`;
  const email = `${ascii(person.split(' ')[0])}.${ascii(person.split(' ').slice(1).join(''))}${i}@example.com`;
  const day = String(1 + Math.floor(random() * 28)).padStart(2, '0');
  const month = String(1 + Math.floor(random() * 12)).padStart(2, '0');
  const date = `202${Math.floor(random() * 6)}-${month}-${day}`;
  const ref = String(Math.floor(random() * 100000)).padStart(6, '0');
  rows.push([
    i % 11 === 0 ? ` ${name} ` : name,
    email,
    country,
    address,
    currency,
    date,
    ref,
    i % 13 === 0 ? 'VIP, call first' : '',
  ]);
}

// Invalid on purpose: each breaks one or more checks (never sent).
rows.push([
  '',
  'missing.name@example.com',
  'DE',
  'Somewhere 1, Berlin',
  'EUR',
  '2024-01-10',
  '900001',
  'no name',
]);
rows.push(['Broken Email', 'not-an-email', 'FR', '1 Rue X, Paris', 'EUR', '2024-02-11', '900002', '']);
rows.push([
  'Bad Country',
  'bad.country@example.com',
  'Germny',
  'Street 2, Berlin',
  'EUR',
  '2024-03-12',
  '900003',
  'typo',
]);
rows.push([
  'Bad Currency',
  'bad.currency@example.com',
  'ES',
  'Calle 4, Madrid',
  'EUR0', // a zero for the O: `EURO` is the currency's name, read as EUR
  '2024-04-13',
  '900004',
  '',
]);
rows.push([
  'Bad Date',
  'bad.date@example.com',
  'IT',
  'Via Roma 1, Roma',
  'EUR',
  '2024-02-30',
  '900005',
  'no Feb 30',
]);
rows.push(['Two Problems', 'two@', 'Atlantis', 'Nowhere', 'EUR', '2024-05-05', '900006', '']);
rows.push(['No Address', 'no.address@example.com', 'US', '', 'USD', '2024-06-06', '900007', '']);
// Duplicates on purpose: exact repeats of earlier rows (same derived idempotency key).
rows.push([...rows[2]]);
rows.push([...rows[40]]);
rows.push([
  rows[99][0],
  rows[99][1].toUpperCase(),
  rows[99][2],
  rows[99][3],
  rows[99][4],
  rows[99][5],
  '999999',
  'same client, e-mail in capitals',
]);

writeFileSync(new URL('../fixtures/clients.csv', import.meta.url), stringify([header, ...rows]));
console.log(`fixtures/clients.csv: ${rows.length} rows`);
