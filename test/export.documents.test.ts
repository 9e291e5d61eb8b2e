/**
 * The CSV `documents` cell: written as bytes when its values hold nothing to escape, through
 * the string path otherwise, the same bytes either way, whatever the delimiter and wherever the
 * column is. Read back, it is the documents as the service listed them.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExportColumn, flattenClient } from '../src/export/columns.js';
import { createEncoder } from '../src/export/encode.js';
import { exportClients } from '../src/export/run-export.js';
import { unescapeFormula } from '../src/import/row/normalize.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import type { Client } from '../src/service/schemas.js';
import { collector } from './export.helpers.js';

type Doc = { name: string | null; key: string | null; status: string | null; reason: string | null };

/** Documents as the sandbox lists them: plain, accented, none, and values to escape. */
const DOCUMENTS: Doc[][] = [
  [{ name: 'passport.pdf', key: 'doc_1', status: 'accepted', reason: null }],
  [
    { name: 'Łódź — €.pdf', key: 'doc_2', status: 'rejected', reason: 'naïve ＋ ü' },
    { name: null, key: 'doc_3', status: null, reason: null },
  ],
  [],
  [{ name: 'a, "b".pdf', key: 'doc_4', status: 'rejected', reason: 'line1\nline2' }],
  [{ name: '=cmd()', key: 'x;=y', status: '\ttab', reason: 'back\\slash' }],
  [{ name: 'emoji 😀.pdf', key: 'doc_5', status: 'accepted', reason: '\u0001' }],
  // Separators with no trigger after them (written as bytes), and with one (escaped: the text path).
  [
    { name: 'a, b.pdf', key: 'x;y', status: 'ends,', reason: 'Name does not match, please re-upload' },
    { name: ", +1 ; '", key: 'doc_6;', status: ';', reason: ',' },
  ],
  [{ name: 'a,=b', key: 'doc_7', status: null, reason: null }],
  [{ name: 'n', key: "a;''@b", status: null, reason: null }],
  [{ name: 'n', key: 'doc_8', status: 'x;-1', reason: null }],
  [{ name: 'n', key: 'doc_9', status: null, reason: ",'+" }],
];

let sandbox: Sandbox;
let service: ServiceClient;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 0 });
  DOCUMENTS.forEach((documents, i) =>
    sandbox.store.insert({ name: `Client ${i}`, email: `c${i}@example.com`, country: 'DE', currency: 'EUR', created_at: `2024-01-${String(i + 1).padStart(2, '0')}T00:00:00.000Z`, documents }),
  );
  service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, retry: { retries: 0 } });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

describe('the documents cell', () => {
  for (const format of ['csv', 'csv-semicolon'] as const) {
    it(`${format}: read back, each client's documents as listed; plain ones written as bytes, quotes doubled`, async () => {
      const sink = collector();
      await exportClients({ service, out: sink, format, columns: ['name', 'documents', 'documents_count'] });
      const text = await sink.text();
      const records = parse(text, { columns: true, bom: true, delimiter: format === 'csv' ? ',' : ';' }) as Record<string, string>[];
      expect(records.map((record) => JSON.parse(unescapeFormula(record.documents!)))).toEqual(DOCUMENTS);
      expect(text).toContain('"[{""name"":""passport.pdf"",""key"":""doc_1"",""status"":""accepted"",""reason"":null}]"');
    });
  }

  it('encodeBytes writes the bytes of encode, documents first, in the middle, last or absent, any delimiter', () => {
    // Also documents absent, or with keys left out: flattenClient makes them null.
    const listed: Client['documents'][] = [...DOCUMENTS, null, [{ key: 'doc_6' }, { name: 'x', reason: 'y' }]];
    const clients = listed.map((documents, i) => flattenClient({ id: `cli_${i}`, name: `Client, ${i}`, documents }));
    const orders: ExportColumn[][] = [['documents', 'id'], ['id', 'documents', 'name'], ['name', 'documents'], ['documents'], ['id', 'name']];
    for (const columns of orders) {
      for (const delimiter of [',', ';', '\t', '|']) {
        for (const escapeFormulas of [true, false]) {
          const encoder = createEncoder({ format: 'csv', columns, bom: false, escapeFormulas, delimiter });
          expect(Buffer.from(encoder.encodeBytes!(clients)).toString('utf8')).toBe(encoder.encode(clients));
        }
      }
    }
  });
});
