/**
 * importClients as a Node developer uses it: a stop rejects with the typed error of its cause
 * and the summary attached; rows that merely fail resolve; a callback that throws ends the run
 * with its error and leaves nothing held; rows come from code and outcomes go back to code.
 */
import { createPrivateKey } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { AuthError, ConnectionError, InputError, StoppedError } from '../src/errors.js';
import { exportClients } from '../src/export/run-export.js';
import { importClients, isImportStop, type RowResult } from '../src/import/run-import.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { CLIENT_HEADER, readResults, startTestSandbox, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

function serviceAt(url: string, token = ctx.sandbox.token): ServiceClient {
  return createServiceClient({ baseUrl: url, token, signer: createSigner(createPrivateKey(ctx.sandbox.privateKeyPem!)) });
}

let files = 0;
async function csvOf(rows: string[][]): Promise<string> {
  const file = join(ctx.dir, `lib-${++files}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...rows]));
  return file;
}

/** The promise's rejection, or a failure when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected the import to reject'),
    (error: unknown) => error,
  );
}

describe('a stop rejects, with the summary attached', () => {
  it('a revoked token: AuthError, the rows not sent counted, the resume as data', async () => {
    const refusing = await startTestSandbox({ authFailAfter: 3 });
    const service = serviceAt(refusing.url, refusing.token);
    try {
      const file = await csvOf(validRows(20, 40_000));
      const error = await rejection(importClients({ file, service, concurrency: 1, identity: { by: 'none' } }));
      expect(error).toBeInstanceOf(AuthError);
      expect(isImportStop(error)).toBe(true);
      if (!isImportStop(error)) return;
      expect(error.code).toBe('auth');
      expect(error.summary.counts.created).toBe(3);
      expect(error.summary.counts.not_attempted + error.summary.counts.failed).toBe(17);
      expect(error.resume).toEqual({ results: `${file}.results.csv`, resume: true });
    } finally {
      await service.close();
      await refusing.close();
    }
  });

  it('a service that is not there: ConnectionError; an abort: StoppedError with the reason as cause', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const down = serviceAt(`http://127.0.0.1:${port}`);
    try {
      const error = await rejection(importClients({ file: await csvOf(validRows(5, 41_000)), service: down, identity: { by: 'none' } }));
      expect(error).toBeInstanceOf(ConnectionError);
      expect(isImportStop(error) && error.summary.counts.created).toBe(0);
    } finally {
      await down.close();
    }

    const service = serviceAt(ctx.sandbox.url);
    const controller = new AbortController();
    const reason = new Error('the nightly window closed');
    try {
      const error = await rejection(
        importClients({
          file: await csvOf(validRows(50, 42_000)),
          service,
          concurrency: 1,
          signal: controller.signal,
          onRow: () => controller.abort(reason),
        }),
      );
      expect(error).toBeInstanceOf(StoppedError);
      expect((error as StoppedError).code).toBe('interrupted');
      expect((error as StoppedError).cause).toBe(reason);
      expect(isImportStop(error) && error.summary.counts.created).toBeGreaterThan(0);
    } finally {
      await service.close();
    }
  });

  it('rows that merely fail or are invalid resolve: not an exception', async () => {
    const service = serviceAt(ctx.sandbox.url);
    try {
      const rows = validRows(3, 43_000);
      rows[1]![1] = 'not-an-email';
      const summary = await importClients({ file: await csvOf(rows), service });
      expect(summary.counts).toMatchObject({ created: 2, invalid: 1 });
      expect(summary.stopped).toBeUndefined();
    } finally {
      await service.close();
    }
  });
});

describe('a callback that throws', () => {
  // onListing: while the service's people are listed, before the first row; onPlan: once planned;
  // onRow: as rows finish; onProgress: at the final snapshot, while the run closes its files.
  for (const callback of ['onListing', 'onPlan', 'onRow', 'onProgress'] as const) {
    it(`${callback}: the run ends with its error, and the results file is free for the next run`, async () => {
      const service = serviceAt(ctx.sandbox.url);
      const file = await csvOf(validRows(10, 44_000 + files * 100));
      const mine = new Error(`${callback} broke`);
      try {
        // onProgress throws at the final snapshot, called while the run closes its files.
        const throwing = callback === 'onProgress' ? { onProgress: () => { throw mine; }, progressIntervalMs: 60_000 } : { [callback]: () => { throw mine; } };
        const error = await rejection(importClients({ file, service, ...throwing }));
        expect(error).toBe(mine);
        // Nothing held: the next run on the same results file resumes it.
        const next = await importClients({ file, service, resume: true });
        expect(next.counts.created + next.counts.skipped).toBe(10);
        expect(readdirSync(ctx.dir).filter((name) => name.endsWith('.lock'))).toEqual([]);
      } finally {
        await service.close();
      }
    });
  }

  it("exportClients: a throwing onProgress ends it with that error; its output's lock is free for the next export", async () => {
    const service = serviceAt(ctx.sandbox.url);
    const out = join(ctx.dir, 'thrown-export.csv');
    const mine = new Error('export progress broke');
    try {
      const error = await rejection(exportClients({ service, out, onProgress: () => { throw mine; }, progressIntervalMs: 60_000 }));
      expect(error).toBe(mine);
      const next = await exportClients({ service, out, overwrite: true });
      expect(next.rows).toBe(ctx.sandbox.store.size);
    } finally {
      await service.close();
    }
  });
});

describe('rows in from code, results out to code', () => {
  async function* fromDatabase(count: number, start: number): AsyncGenerator<Record<string, unknown>> {
    for (let i = 0; i < count; i++) {
      yield { ref: start + i, Kunde: `Db Client ${start + i}`, Mail: `db${start + i}@example.com`, Land: 'Österreich', Adresse: `Gasse ${i}`, since: new Date(Date.UTC(2024, 4, 17)) };
    }
  }

  it('an async generator, the caller\'s column names with map, client ids back through onRow; no results file left behind', async () => {
    const service = serviceAt(ctx.sandbox.url);
    const results: RowResult[] = [];
    const before = new Set(readdirSync(tmpdir()));
    try {
      const summary = await importClients({
        rows: fromDatabase(30, 45_000),
        service,
        map: { name: 'Kunde', email: 'Mail', application_date: 'since' },
        onRow: (result) => results.push(result),
      });
      expect(summary.counts.created).toBe(30);
      expect(summary.file).toBe('rows');
      expect(results).toHaveLength(30);
      const first = results.find((r) => r.values.ref === '45000')!;
      expect(first).toMatchObject({ outcome: 'created', error: undefined, values: { Mail: 'db45000@example.com', Land: 'Österreich', since: '2024-05-17' } });
      const client = ctx.sandbox.store.get(first.clientId!);
      expect(client).toMatchObject({ email: 'db45000@example.com', country: 'AT' });
      // The run's own results file, in a private folder, is gone.
      expect([...readdirSync(tmpdir())].filter((name) => !before.has(name) && name.startsWith('ccs-bulk-rows-'))).toEqual([]);
    } finally {
      await service.close();
    }
  });

  it('a results file named: the same lines as onRow got; a resume skips what was created, by key', async () => {
    const service = serviceAt(ctx.sandbox.url);
    const resultsFile = join(ctx.dir, 'db.results.csv');
    const got: RowResult[] = [];
    try {
      const rows = [...validRows(6, 46_000)].map(([name, email, country, address]) => ({ name, email, country, address }));
      rows[2]!.email = 'broken';
      await importClients({ rows, service, results: resultsFile, onRow: (r) => got.push(r) });
      const lines = await readResults(resultsFile);
      expect(lines.map((l) => [l[0], l[1], l[2]]).sort()).toEqual(got.map((r) => [String(r.row), r.outcome, r.clientId ?? '']).sort());
      expect(got.find((r) => r.outcome === 'invalid')?.error).toMatchObject({ type: 'validation', code: 'invalid_row' });
      rows[2]!.email = 'fixed@example.com';
      const again = await importClients({ rows, service, results: resultsFile, resume: true });
      expect(again.counts).toMatchObject({ skipped: 5, created: 1 });
    } finally {
      await service.close();
    }
  });

  it('a row with a key the first row had not, or a value that is not text, a number or a Date: InputError by row and key', async () => {
    const service = serviceAt(ctx.sandbox.url);
    try {
      const extra = [{ name: 'A', email: 'a@x.example', country: 'DE', address: 'S 1' }, { name: 'B', email: 'b@x.example', country: 'DE', address: 'S 2', vip: true }];
      const error = await rejection(importClients({ rows: extra, service }));
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).message).toContain('row 2 has "vip", which the first row has not');
      const nested = [{ name: 'A', email: 'a@x.example', country: 'DE', address: { street: 'S 1' } }];
      const bad = await rejection(importClients({ rows: nested, service }));
      expect((bad as InputError).message).toContain('row 1, "address" is an object');
      expect(existsSync(join(ctx.dir, 'rows.results.csv'))).toBe(false);
    } finally {
      await service.close();
    }
  });
});
