/**
 * The export baseline: a bare paging loop over List Clients (undici Pool, the same page size
 * and pages in flight as the exporter, the same pinned upper bound) into csv-stringify and a
 * file. No page-base detection, repeat checks or formula escaping. Prints one JSON line.
 * argv[2] is JSON: { url, token, out, pageSize, prefetch, maxPages, timeoutMs }.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { stringify } from 'csv-stringify/sync';
import { Pool } from 'undici';
import { EXPORT_COLUMNS } from '../../dist/export/columns.js';

const options = JSON.parse(process.argv[2] ?? '{}');
// The exporter's own column list: the baseline writes the same file, only without its care.
const COLUMNS = EXPORT_COLUMNS;
const { pageSize, prefetch } = options;
const pool = new Pool(new URL(options.url).origin, { connections: prefetch, keepAliveTimeout: 30_000 });
const headers = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
const createdTo = encodeURIComponent(new Date().toISOString());

const fetchPage = async (page) => {
  const response = await pool.request({
    path: `/v1/clients?created_at.to=${createdTo}&page=${page}&size=${pageSize}&direction=asc`,
    method: 'GET',
    headers,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`page ${page}: HTTP ${response.statusCode} ${text}`);
  return JSON.parse(text).data.clients;
};

const flat = (client) => [
  client.id,
  client.name,
  client.email,
  client.country,
  client.address,
  client.currency,
  client.status,
  client.credit_status,
  client.created_at,
  client.bank_information?.iban,
  client.bank_information?.account_number,
  client.bank_information?.swift_code,
  client.documents?.length ?? 0,
  JSON.stringify(client.documents ?? []),
];

const started = performance.now();
const deadline = started + options.timeoutMs;
const out = createWriteStream(options.out, { mode: 0o600 });
out.write(stringify([COLUMNS], { record_delimiter: 'windows' }));
const pending = new Map();
const request = (page) => {
  const promise = fetchPage(page);
  promise.catch(() => {}); // pages fetched past the end are dropped unread
  pending.set(page, promise);
};
for (let page = 0; page < prefetch; page++) request(page);
let rows = 0;
for (let page = 0; page < options.maxPages && performance.now() < deadline; page++) {
  const clients = await pending.get(page);
  pending.delete(page);
  if (clients.length > 0) {
    rows += clients.length;
    if (!out.write(stringify(clients.map(flat), { record_delimiter: 'windows' }))) await once(out, 'drain');
  }
  if (clients.length < pageSize) break;
  request(page + prefetch);
}
out.end();
await once(out, 'finish');
const elapsedS = (performance.now() - started) / 1000;
await pool.destroy();
process.stdout.write(`${JSON.stringify({ rows, elapsedS, rowsPerSecond: rows / elapsedS })}\n`);
