/**
 * Output: columns and formats, formula escaping, the temp-file-then-rename contract (a failed
 * or interrupted export leaves no file under the final name and no temp file), private (0600) while written and after.
 */
import { readdirSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, NetworkError, StoppedError } from '../src/errors.js';
import { EXPORT_COLUMNS, flattenClient } from '../src/export/columns.js';
import { createEncoder } from '../src/export/encode.js';
import { escapeFormula } from '../src/export/escape.js';
import { exportClients } from '../src/export/run-export.js';
import { unescapeFormula } from '../src/import/row/normalize.js';
import { type Sandbox, type SandboxClient, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import { collector, parseCsv } from './export.helpers.js';
import { makeTempDir } from './helpers.js';

let sandbox: Sandbox;
let service: ServiceClient;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
const FORMULAS = [
  '=SUM(A1:A9)',
  '+44 20 7946 0000',
  '-5 Minus Corp',
  '@handle Ltd',
  '\tTabbed',
  '\rCarriage',
  "'=quoted",
];
/** The inserted clients in export order: same created_at, so by id. */
let tricky: SandboxClient[];
let names: string[];

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 2000, seedRandom: 9 });
  tricky = FORMULAS.map((name, i) =>
    sandbox.store.insert({
      name,
      email: `${i % 2 ? '+' : ''}formula${i}@example.com`,
      address: `=HYPERLINK("http://evil/${i}")`,
      country: 'DE',
      currency: 'EUR',
      created_at: '2023-01-01T00:00:00.000Z',
      bank_information: { iban: 'DE89370400440532013000', swift_code: 'COBADEFFXXX' },
      documents: [{ name: 'a, "b".pdf', key: 'doc_1', status: 'rejected', reason: 'line1\nline2' }],
    }),
  ).sort((a, b) => (a.id < b.id ? -1 : 1));
  names = tricky.map((client) => client.name);
  service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, retry: { retries: 0 } });
  temp = await makeTempDir();
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
  await temp?.cleanup();
});

const FORMULA_DAY = { createdFrom: '2023-01-01', createdTo: '2023-01-01' } as const;

describe('formats and columns', () => {
  it('CSV: every column, bank flattened, documents as JSON, RFC 4180 CRLF records', async () => {
    const sink = collector();
    await exportClients({ service, out: sink, ...FORMULA_DAY, escapeFormulas: false });
    const text = await sink.text();
    expect(text.startsWith(`${EXPORT_COLUMNS.join(',')}\r\n`)).toBe(true);
    const records = parseCsv(text);
    expect(records).toHaveLength(FORMULAS.length);
    const first = records[0]!;
    expect(first).toMatchObject({
      id: tricky[0]!.id,
      name: tricky[0]!.name,
      bank_iban: 'DE89370400440532013000',
      bank_account_number: '',
      bank_swift_code: 'COBADEFFXXX',
      documents_count: '1',
      created_at: '2023-01-01T00:00:00.000Z',
    });
    expect(JSON.parse(first.documents!)).toEqual(tricky[0]!.documents);
  });

  it('cells with a bare LF or CR, a comma or a quote are quoted; others are not (RFC 4180)', () => {
    const encoder = createEncoder({
      format: 'csv',
      columns: ['id', 'name', 'address'],
      bom: false,
      escapeFormulas: false,
    });
    const row = (name: string, address: string) =>
      encoder.encode([flattenClient({ id: 'x', name, address })]);
    expect(row('a\nb', 'c\rd')).toBe('x,"a\nb","c\rd"\r\n');
    expect(row('Smith, John', 'The "Old" Mill')).toBe('x,"Smith, John","The ""Old"" Mill"\r\n');
    expect(row('plain', ' spaced ')).toBe('x,plain, spaced \r\n');
  });

  it('formula cells get a leading quote by default, and the importer takes it off again', async () => {
    const sink = collector();
    await exportClients({ service, out: sink, ...FORMULA_DAY, columns: 'id,name,email,address' });
    const records = parseCsv(await sink.text());
    const byId = new Map(records.map((r) => [r.id, r]));
    for (const client of tricky) {
      const record = byId.get(client.id)!;
      for (const column of ['name', 'email', 'address'] as const) {
        expect(record[column]).toBe(
          /^'*[=+\-@\t\r]/.test(client[column]) ? `'${client[column]}` : client[column],
        );
        if (client[column].startsWith("'")) continue; // see the escape rule test below
        expect(unescapeFormula(record[column]!)).toBe(client[column]);
      }
    }
    expect(Object.keys(records[0]!)).toEqual(['id', 'name', 'email', 'address']);
  });

  it('the escape rule is reversible: a leading quote before a trigger gets one more quote', () => {
    for (const value of ['=1', "'=1", "''=1", "'plain", 'plain', '', '-', "'"]) {
      const escaped = escapeFormula(value);
      // The reverse the importer needs: strip one quote from /^'+[trigger]/.
      const back = /^'+[=+\-@\t\r]/.test(escaped) ? escaped.slice(1) : escaped;
      expect(back).toBe(value);
    }
    expect(escapeFormula("'=1")).toBe("''=1");
  });

  it('--no-escape-formulas writes cells as they are', async () => {
    const sink = collector();
    await exportClients({ service, out: sink, ...FORMULA_DAY, columns: ['name'], escapeFormulas: false });
    expect(parseCsv(await sink.text()).map((r) => r.name)).toEqual(names);
  });

  it('JSONL: one object per line, chosen columns, native types, never escaped', async () => {
    const sink = collector();
    await exportClients({
      service,
      out: sink,
      ...FORMULA_DAY,
      format: 'jsonl',
      columns: 'name,documents_count,documents,currency,bank_account_number',
    });
    const lines = (await sink.text()).split('\n');
    expect(lines.pop()).toBe('');
    const objects = lines.map((line) => JSON.parse(line));
    expect(objects.map((o) => o.name)).toEqual(names);
    expect(objects[0]).toEqual({
      name: tricky[0]!.name,
      documents_count: 1,
      documents: tricky[0]!.documents,
      currency: 'EUR',
      bank_account_number: null,
    });
  });

  it('--bom starts the CSV with a UTF-8 BOM; an empty export still has its header', async () => {
    const sink = collector();
    const summary = await exportClients({
      service,
      out: sink,
      bom: true,
      columns: 'id,name',
      createdTo: '2000-01-01',
    });
    expect(await sink.text()).toBe('\uFEFFid,name\r\n');
    expect(summary.rows).toBe(0);
  });
});

describe('files', () => {
  it('writes via a private temp file renamed into place, 0600 whatever the umask, replacing an old file', async () => {
    const out = join(temp.dir, 'clients.csv');
    await writeFile(out, 'old content', { mode: 0o644 });
    // The temp file as another user would find it while the export runs: private from its first byte.
    const tempModes: number[] = [];
    const summary = await exportClients({
      service,
      out,
      prefetch: 8,
      overwrite: true,
      onProgress: () => {
        for (const name of readdirSync(temp.dir)) if (name.endsWith('.tmp')) tempModes.push(statSync(join(temp.dir, name)).mode & 0o777);
      },
    });
    expect(summary.out).toBe(out);
    expect(summary.rows).toBe(2000 + FORMULAS.length);
    expect(summary.fileMode).toBe(0o600);
    expect(tempModes.length).toBeGreaterThan(0);
    expect(new Set(tempModes)).toEqual(new Set([0o600]));
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const records = parseCsv(await readFile(out, 'utf8'));
    expect(records).toHaveLength(summary.rows);
    expect(await readdir(temp.dir)).toEqual(['clients.csv']);
  });

  it('a 401 mid-way leaves no file and no temp file, and keeps an existing file as it was', async () => {
    const victim = await startSandbox({ verifySignatures: false, seed: 1500, seedRandom: 4 });
    const client = createServiceClient({ baseUrl: victim.url, token: victim.token, retry: { retries: 0 } });
    let calls = 0;
    const revoking: ServiceClient = {
      ...client,
      listClients(query) {
        if (++calls === 6) victim.revokeToken();
        return client.listClients(query);
      },
    };
    const dir = join(temp.dir, 'auth');
    await mkdir(dir);
    await writeFile(join(dir, 'kept.csv'), 'last month');
    const fresh = exportClients({ service: revoking, out: join(dir, 'new.csv'), pageSize: 50, prefetch: 2 });
    await expect(fresh).rejects.toBeInstanceOf(AuthError);
    calls = 0;
    const kept = exportClients({ service: client, out: join(dir, 'kept.csv'), pageSize: 50, overwrite: true });
    await expect(kept).rejects.toMatchObject({ exitCode: 3 });
    expect(await readdir(dir)).toEqual(['kept.csv']);
    expect(await readFile(join(dir, 'kept.csv'), 'utf8')).toBe('last month');
    await client.close();
    await victim.close();
  });

  it('a server that goes away mid-way leaves no file', async () => {
    const victim = await startSandbox({ verifySignatures: false, seed: 1500, seedRandom: 4, latencyMs: 5 });
    const client = createServiceClient({ baseUrl: victim.url, token: victim.token, retry: { retries: 0 } });
    const dir = join(temp.dir, 'closed');
    await mkdir(dir);
    let pages = 0;
    const closing: ServiceClient = {
      ...client,
      listClients(query) {
        if (++pages === 5) void victim.close();
        return client.listClients(query);
      },
    };
    await expect(
      exportClients({ service: closing, out: join(dir, 'x.csv'), pageSize: 50 }),
    ).rejects.toBeInstanceOf(NetworkError);
    expect(await readdir(dir)).toEqual([]);
    await client.close();
  });

  it('an interrupted export (abort signal) leaves no file and says it was interrupted', async () => {
    const slow = await startSandbox({ verifySignatures: false, seed: 1000, latencyMs: 20 });
    const client = createServiceClient({ baseUrl: slow.url, token: slow.token });
    const dir = join(temp.dir, 'abort');
    await mkdir(dir);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const run = exportClients({
      service: client,
      out: join(dir, 'x.csv'),
      pageSize: 20,
      signal: controller.signal,
    });
    await expect(run).rejects.toBeInstanceOf(StoppedError);
    await expect(run).rejects.toMatchObject({ code: 'interrupted', exitCode: 3 });
    expect(await readdir(dir)).toEqual([]);
    await client.close();
    await slow.close();
  });

  it('a folder that cannot be made or a directory is a usage error before any request', async () => {
    const requests = sandbox.stats.requests;
    // A missing folder is made (missing-folders tests: test/docs.scheduled.test.ts); one under a file cannot be.
    await writeFile(join(temp.dir, 'a-file'), '');
    await expect(exportClients({ service, out: join(temp.dir, 'a-file', 'sub', 'x.csv') })).rejects.toThrow(
      /cannot create the folder .*a-file\/sub: ENOTDIR; create the missing folder first: mkdir -p .*a-file\/sub'?$/,
    );
    await expect(exportClients({ service, out: temp.dir })).rejects.toThrow(/is a directory/);
    expect(sandbox.stats.requests).toBe(requests);
  });
});
