/**
 * The export's end-of-run account: fed what could cause a gap (a page never received, a pager
 * that stops before the documented end, clients dropped between the pages and the writer), it
 * refuses exit 0 (`incomplete_run`, exit 3); a complete run's figures reach --json.
 */
import { describe, expect, it } from 'vitest';
import { StoppedError } from '../src/errors.js';
import { ExportAccount } from '../src/export/account.js';
import { type FetchedPage, newPagingStats, type PagingStats } from '../src/export/page.js';
import type { Client } from '../src/service/schemas.js';
import { exportClients } from '../src/export/run-export.js';
import { startSandbox } from '../src/sandbox/index.js';
import { createServiceClient } from '../src/service/client.js';
import { collector } from './export.helpers.js';

const clients = (n: number, from = 0): Client[] => Array.from({ length: n }, (_, i) => ({ id: `c${from + i}` }) as Client);
const page = (number: number, fresh: number, received = fresh): FetchedPage => ({ number, clients: clients(fresh, number * 100), received });

function stats(overrides: Partial<PagingStats>): PagingStats {
  return { ...newPagingStats(3), pageBase: 0, ...overrides };
}

/** Feeds pages (each fully written unless `written` says otherwise) and checks. */
function run(pages: FetchedPage[], end: Partial<PagingStats>, written?: number): ReturnType<ExportAccount['check']> {
  const account = new ExportAccount();
  let rows = 0;
  for (const p of pages) {
    account.page(p, p.clients.length);
    account.wrote(p.clients.length);
    rows += p.clients.length;
  }
  return account.check(stats(end), written ?? rows);
}

describe('the account refuses a gap (exit 3, incomplete_run)', () => {
  it.each([
    ['a page skipped in the middle', [page(0, 3), page(2, 3), page(3, 1)], { endPage: 3 }, undefined, /page 1 was not received \(page 2 came after page 0\)/],
    ['a pager that ends before the documented end', [page(0, 3), page(1, 3)], { endPage: undefined }, undefined, /the last page \(a short or empty one\) was never received/],
    ['pages missing before the end', [page(0, 3), page(1, 3)], { endPage: 4 }, undefined, /pages 2 to 3 were not received/],
    ['clients dropped by the pager without being counted as repeats', [page(0, 2, 3), page(1, 1)], { endPage: 1 }, undefined, /4 clients received, 3 new and 0 repeats/],
    ['a batch lost between the pages and the rows written', [page(0, 3), page(1, 2)], { endPage: 1 }, 3, /5 clients to write, 5 encoded, 3 counted as written/],
    ['page 1 missing on a 0-based server', [page(0, 3), page(2, 1)], { endPage: 2, pageBase: 0 }, undefined, /page 1 was not received/],
  ] as const)('%s', (_name, pages, end, written, message) => {
    expect(() => run([...pages], end, written)).toThrow(StoppedError);
    try {
      run([...pages], end, written);
    } catch (error) {
      expect((error as StoppedError).code).toBe('incomplete_run');
      expect((error as StoppedError).exitCode).toBe(3);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toMatch(/nothing was written \(no file, the state unchanged\): run it again/);
    }
  });

  it('holds for a complete run: an empty last page, repeats, a 1-based server whose page 1 repeats page 0', () => {
    expect(run([page(0, 3), page(1, 3), page(2, 2)], { endPage: 3 })).toEqual({
      pagesExpected: 4,
      pagesReceived: 3,
      received: 8,
      duplicates: 0,
      skipped: 0,
      written: 8,
    });
    expect(run([page(0, 3), page(1, 2, 3)], { endPage: 1, duplicates: 1 })).toMatchObject({ duplicates: 1, written: 5 });
    expect(run([page(0, 3), page(2, 1)], { endPage: 2, pageBase: 1 })).toMatchObject({ written: 4 });
    expect(run([], { endPage: 0 })).toMatchObject({ pagesExpected: 1, pagesReceived: 0, written: 0 });
  });
});

describe('a real export carries its account', () => {
  it('pages, clients received and written in the summary; incremental skips counted apart', async () => {
    const sandbox = await startSandbox({ verifySignatures: false, seed: 250, seedRandom: 3 });
    const service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, retry: { retries: 0 } });
    try {
      const summary = await exportClients({ service, out: collector(), pageSize: 100 });
      expect(summary.account).toEqual({ pagesExpected: 3, pagesReceived: 3, received: 250, duplicates: 0, skipped: 0, written: 250 });
    } finally {
      await service.close();
      await sandbox.close();
    }
  });
});
