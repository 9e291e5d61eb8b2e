/**
 * Under `--concurrency auto` the signer works ahead of the wire while the limit grows: rows wait
 * signed for a place (the send window's backlog). After a stop, the rows still waiting for the
 * signer are not signed. A gate holds the requests, so "the limit is still at its start" is a
 * fact of the test, not a race with the service's answers.
 */
import { createPrivateKey } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { IMPORT_DEFAULTS } from '../src/import/defaults.js';
import { importClients, isImportStop } from '../src/import/run-import.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner, type Signer } from '../src/service/signing.js';
import { startGate } from './gate.helpers.js';
import { CLIENT_HEADER, readResults, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

/** As the import's send window: rows signed at once. */
const AHEAD = Math.max(16, 4 * availableParallelism());
const START = IMPORT_DEFAULTS.startConcurrency;

/** The real signer, counting what it signed; `reached(n)` resolves once n bodies are signed. */
function countingSigner(privateKeyPem: string) {
  const inner = createSigner(createPrivateKey(privateKeyPem));
  let signed = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const signer: Signer = {
    scheme: inner.scheme,
    async sign(body) {
      const signature = await inner.sign(body);
      signed++;
      for (const waiter of waiters.filter(({ count }) => signed >= count)) waiter.resolve();
      return signature;
    },
  };
  return {
    signer,
    get signed() {
      return signed;
    },
    reached: (count: number) => new Promise<void>((resolve) => (signed >= count ? resolve() : waiters.push({ count, resolve }))),
  };
}

async function csvOf(name: string, rows: number, start: number): Promise<string> {
  const path = join(ctx.dir, name);
  await writeFile(path, stringify([CLIENT_HEADER, ...validRows(rows, start)]));
  return path;
}

describe('the signed backlog under --concurrency auto', () => {
  it('signs every row while the wire still holds only its starting limit, then sends them all', async () => {
    const rows = START + AHEAD + 40;
    const file = await csvOf('ahead.csv', rows, 1);
    const counting = countingSigner(ctx.sandbox.privateKeyPem!);
    const gate = await startGate(ctx.sandbox.url);
    gate.close();
    const service = createServiceClient({ baseUrl: gate.url, token: ctx.sandbox.token, signer: counting.signer });
    const before = ctx.sandbox.store.size;
    try {
      const run = importClients({ file, service, results: join(ctx.dir, 'ahead.results.csv') });
      // No answer has come yet, so the limit is still START; the signer went on past it.
      await counting.reached(rows);
      expect(gate.forwarded).toBe(0);
      expect(gate.held).toBeLessThanOrEqual(START);
      gate.open();
      const summary = await run;
      expect(summary.counts.created).toBe(rows);
      expect(summary.concurrency.mode).toBe('auto');
      expect(counting.signed).toBe(rows);
      expect(ctx.sandbox.store.size - before).toBe(rows);
    } finally {
      await service.close();
      await gate.stop();
    }
  });

  it('after a stop, rows still waiting for the signer are not signed, and every row read has its outcome', async () => {
    const rows = START + 2 * AHEAD + 100;
    const file = await csvOf('stop.csv', rows, 1000);
    const results = join(ctx.dir, 'stop.results.csv');
    const counting = countingSigner(ctx.sandbox.privateKeyPem!);
    const gate = await startGate(ctx.sandbox.url);
    gate.close();
    const service = createServiceClient({ baseUrl: gate.url, token: ctx.sandbox.token, signer: counting.signer });
    const before = ctx.sandbox.store.size;
    const controller = new AbortController();
    try {
      const run = importClients({ file, service, results, signal: controller.signal });
      await counting.reached(START + AHEAD);
      const signedAtStop = counting.signed;
      controller.abort();
      gate.open();
      // An abort is a stop: the call rejects with StoppedError, the summary attached.
      const stop = await run.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isImportStop(stop)).toBe(true);
      if (!isImportStop(stop)) return;
      expect(stop.code).toBe('interrupted');
      const { summary } = stop;
      expect(summary.stopped?.reason).toBe('interrupted');
      // Only the signatures already under way when it stopped (at most AHEAD of them) finished.
      expect(counting.signed).toBeLessThanOrEqual(signedAtStop + AHEAD);
      expect(counting.signed).toBeLessThan(rows);
      const lines = await readResults(results);
      const created = lines.filter((line) => line[1] === 'created');
      expect(created).toHaveLength(ctx.sandbox.store.size - before);
      expect(lines.filter((line) => line[1] !== 'created').every((line) => line[1] === 'not_attempted')).toBe(true);
      expect(lines.length).toBe(summary.rows);
    } finally {
      await service.close();
      await gate.stop();
    }
  });
});
