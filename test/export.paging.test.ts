/**
 * Paging: every client once whatever the page base and direction; servers that repeat pages
 * fail loudly instead of looping; clients created during the export change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError, UsageError } from '../src/errors.js';
import { busyPrefetch, newPagingStats, pageClients, pagesAhead } from '../src/export/page.js';
import { type ExportClientsOptions, exportClients } from '../src/export/run-export.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import type { Client } from '../src/service/schemas.js';
import { createWireSlots } from '../src/service/wire-slots.js';
import { collector, expectedIds, idRange, parseCsv, startFakeService } from './export.helpers.js';

const SEED = 3000;
let base0: Sandbox;
let base1: Sandbox;

beforeAll(async () => {
  [base0, base1] = await Promise.all([
    startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 11 }),
    startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 11, pageBase: 1 }),
  ]);
});
afterAll(() => Promise.all([base0?.close(), base1?.close()]));

const clientOf = (target: { url: string; token?: string }, retries = 0): ServiceClient =>
  createServiceClient({
    baseUrl: target.url,
    token: target.token ?? 'lk_sandbox_test',
    retry: { retries },
    connections: 8,
  });

async function exportIds(service: ServiceClient, settings: Omit<ExportClientsOptions, 'service' | 'out'>) {
  const sink = collector();
  const summary = await exportClients({ ...settings, service, out: sink, columns: ['id', 'created_at'] });
  const records = parseCsv(await sink.text());
  return { summary, records, ids: records.map((r) => r.id!) };
}

describe('full export against the sandbox', () => {
  for (const [label, target] of [
    ['page base 0', () => base0],
    ['page base 1', () => base1],
  ] as const) {
    for (const direction of ['asc', 'desc'] as const) {
      it(`${label}, ${direction}: every client once, in order`, async () => {
        const sandbox = target();
        const service = clientOf(sandbox);
        const { summary, records, ids } = await exportIds(service, { direction, pageSize: 100, prefetch: 4 });
        await service.close();
        expect(new Set(ids).size).toBe(ids.length);
        expect(new Set(ids)).toEqual(expectedIds(sandbox.store.all()));
        const times = records.map((r) => r.created_at!);
        const sorted = [...times].sort();
        expect(times).toEqual(direction === 'asc' ? sorted : sorted.reverse());
        expect(summary).toMatchObject({
          rows: SEED,
          pages: SEED / 100,
          pageBase: label.endsWith('1') ? 1 : 0,
        });
        expect(summary.duplicatesDropped).toBe(0);
      });
    }
  }

  it('works with page sizes that do not divide the total, and prefetch 1 or 16', async () => {
    const service = clientOf(base1);
    for (const [pageSize, prefetch] of [
      [7, 1],
      [64, 16],
    ] as const) {
      const { ids, summary } = await exportIds(service, { pageSize, prefetch });
      expect(ids).toHaveLength(SEED);
      expect(new Set(ids).size).toBe(SEED);
      expect(summary.pages).toBe(Math.ceil(SEED / pageSize));
    }
    await service.close();
  });

  it('a page size above the service limit is a usage error naming --page-size', async () => {
    const service = clientOf(base0);
    await expect(exportIds(service, { pageSize: 500 })).rejects.toThrow(/--page-size/);
    await expect(exportIds(service, { pageSize: 500 })).rejects.toBeInstanceOf(UsageError);
    await service.close();
  });
});

describe('servers the sandbox does not emulate', () => {
  it('a server that ignores `page` (repeats page 0) fails with a clear error, not a loop', async () => {
    const fake = await startFakeService((_page, size) => ({ ids: idRange('a', 0, size) }));
    const service = clientOf(fake);
    const error = await exportIds(service, { pageSize: 10, prefetch: 4 }).catch((e: unknown) => e);
    await service.close();
    await fake.close();
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'repeated_page', exitCode: 1 });
    expect((error as Error).message).toMatch(/same 10 clients as page 0.*instead of looping/);
    expect(Math.max(...fake.pages)).toBeLessThan(10);
  });

  it('a server cycling through two pages fails at the first repeat', async () => {
    const fake = await startFakeService((page, size) => ({ ids: idRange(page % 2 ? 'b' : 'a', 0, size) }));
    const service = clientOf(fake);
    await expect(exportIds(service, { pageSize: 10, prefetch: 2 })).rejects.toThrow(
      /page 2 with the same 10 clients as page 0/,
    );
    await service.close();
    await fake.close();
  });

  it('a server whose distinct pages bring nothing new fails too', async () => {
    // 20 ids, each page leaves out a different pair: never the same page, never the end.
    const fake = await startFakeService((page) => {
      const skip = new Set([(2 * page) % 20, (2 * page + 1) % 20]);
      return { ids: idRange('c', 0, 20).filter((_, i) => !skip.has(i)) };
    });
    const service = clientOf(fake);
    await expect(exportIds(service, { pageSize: 18 })).rejects.toMatchObject({ code: 'repeated_page' });
    await service.close();
    await fake.close();
  });

  it('ids a shift repeats on the next pages are written once; one repeated from far back is written again, counted', async () => {
    // Pages of 10 from a listing that shifts as clients enter the filter ahead of the reader:
    // by 2 before page 3 is served, by 1 more before page 4 (page 3 repeats 2 ids of page 2,
    // page 4 one of page 3). The short last page, 9, also repeats an id of page 1, 8 pages back:
    // beyond the pages whose ids are kept, it matches by its 64-bit print only.
    const all = idRange('s', 0, 95);
    const pageIds = (page: number): string[] => {
      const start = page * 10 - (page >= 4 ? 3 : page === 3 ? 2 : 0);
      const ids = all.slice(start, start + 10);
      return page === 9 ? [all[15]!, ...ids] : ids;
    };
    const fake = await startFakeService((page) => ({ ids: pageIds(page) }));
    const service = clientOf(fake);
    const { ids, summary } = await exportIds(service, { pageSize: 10, prefetch: 3 });
    await service.close();
    await fake.close();
    const written = new Set(ids);
    // Nothing lost: every id the server listed is in the file.
    expect(all.filter((id) => !written.has(id))).toEqual([]);
    expect(ids.filter((id) => id === 's28' || id === 's29' || id === 's37')).toEqual(['s28', 's29', 's37']);
    expect(ids.filter((id) => id === 's15')).toEqual(['s15', 's15']);
    expect(summary).toMatchObject({ duplicatesDropped: 3, possibleRepeats: 1 });
    expect(summary.account).toMatchObject({ duplicates: 3, written: ids.length });
  });

  it('a page keeps of each client what `slim` leaves of it, from the moment it arrives', async () => {
    const all = idRange('k', 0, 25);
    const fake = await startFakeService((page, size) => ({ ids: all.slice(page * size, (page + 1) * size) }));
    const service = clientOf(fake);
    const known = (id: string) => Number(id.slice(1)) % 2 === 0;
    const slim = (client: Client): Client => (known(client.id) ? { id: client.id } : client);
    const pages = [];
    for await (const page of pageClients({ service, filters: {}, pageSize: 10, prefetch: () => 4, slim }, newPagingStats(10))) {
      pages.push(page);
    }
    await service.close();
    await fake.close();
    const clients = pages.flatMap((page) => page.clients);
    expect(clients.map((client) => client.id)).toEqual(all);
    for (const client of clients) {
      expect(client).toEqual(known(client.id) ? { id: client.id } : { id: client.id, name: `Client ${client.id}` });
    }
  });

  it('while the writer waits for a late page, the pages behind it keep the wire full, never past its limit', async () => {
    const all = idRange('o', 0, 120);
    // Pages 1–4 answer once all four are at the service (the wire full), and page 1 only after
    // pages 2–7: with 4 places on the wire, pages 5–7 can only go out on the places pages 2–4
    // leave when they answer ahead of it.
    let releasePage1 = () => {};
    const page1 = new Promise<void>((resolve) => (releasePage1 = resolve));
    let releaseFirstFour = () => {};
    const firstFour = new Promise<void>((resolve) => (releaseFirstFour = resolve));
    const answeredAhead = new Set<number>();
    let atService = 0;
    let mostAtService = 0;
    const fake = await startFakeService(async (page, size) => {
      mostAtService = Math.max(mostAtService, ++atService);
      try {
        if (page >= 1 && page <= 4) {
          if (atService === 4) releaseFirstFour();
          await firstFour;
        }
        if (page === 1) await page1;
        return { ids: all.slice(page * size, (page + 1) * size) };
      } finally {
        atService--;
        if (page >= 2 && page <= 7) answeredAhead.add(page);
        if (answeredAhead.size === 6) releasePage1();
      }
    });
    const service = clientOf(fake);
    const stats = newPagingStats(10);
    const wire = createWireSlots(4);
    const busy: number[] = [];
    const unwatch = service.watchAnswers(() => {
      if (stats.waiting) busy.push(busyPrefetch(stats, wire));
    });
    const ids = [];
    const options = { service, filters: {}, pageSize: 10, prefetch: () => pagesAhead(wire.limit, true, 1024), wire };
    for await (const page of pageClients(options, stats)) ids.push(...page.clients.map((c) => c.id));
    unwatch();
    await service.close();
    await fake.close();
    expect(ids).toEqual(all);
    expect(mostAtService).toBe(4);
    expect(Math.max(...busy)).toBe(4);
    expect(stats.inFlight).toBe(0);
    expect(wire.held).toBe(0);
  });

  it('a pinned prefetch keeps as many pages ahead as it allows on the wire; auto twice that, within its bound', () => {
    expect(pagesAhead(16, false, 1024)).toBe(16);
    expect(pagesAhead(16, true, 1024)).toBe(32);
    expect(pagesAhead(700, true, 1024)).toBe(1024);
  });

  it('a 1-based server that serves page 0 as page 1: no error, every client once', async () => {
    const all = idRange('d', 0, 95);
    const fake = await startFakeService((page, size) => {
      const start = (Math.max(page, 1) - 1) * size;
      return { ids: all.slice(start, start + size) };
    });
    const service = clientOf(fake);
    const { ids, summary } = await exportIds(service, { pageSize: 10 });
    await service.close();
    await fake.close();
    expect(ids).toEqual(all);
    expect(summary.pageBase).toBe(1);
  });

  it('a 1-based server that answers page 0 with an empty page', async () => {
    const all = idRange('e', 0, 25);
    const fake = await startFakeService((page, size) => ({
      ids: page === 0 ? [] : all.slice((page - 1) * size, page * size),
    }));
    const service = clientOf(fake);
    const { ids, summary } = await exportIds(service, { pageSize: 10 });
    await service.close();
    await fake.close();
    expect(ids).toEqual(all);
    expect(summary.pageBase).toBe(1);
  });

  it('a server that caps the page size (and says so) is not mistaken for a short last page', async () => {
    const all = idRange('f', 0, 130);
    const fake = await startFakeService((page) => ({ ids: all.slice(page * 50, page * 50 + 50), size: 50 }));
    const service = clientOf(fake);
    const { ids, summary } = await exportIds(service, { pageSize: 100 });
    await service.close();
    await fake.close();
    expect(ids).toEqual(all);
    expect(summary.pageSize).toBe(50);
  });

  it('errors of pages prefetched past the end are ignored', async () => {
    const all = idRange('g', 0, 35);
    const fake = await startFakeService((page, size) =>
      page > 3
        ? { status: 500, error: { type: 'api_error' } }
        : { ids: all.slice(page * size, (page + 1) * size) },
    );
    const service = clientOf(fake);
    const { ids } = await exportIds(service, { pageSize: 10, prefetch: 8 });
    await service.close();
    await fake.close();
    expect(ids).toEqual(all);
  });
});

describe('clients created while exporting', () => {
  for (const direction of ['asc', 'desc'] as const) {
    it(`${direction}: no duplicates, nothing missed, nothing after the pinned bound`, async () => {
      const sandbox = await startSandbox({
        verifySignatures: false,
        seed: 1500,
        seedRandom: 5,
        latencyMs: 15,
      });
      const before = expectedIds(sandbox.store.all());
      const service = clientOf(sandbox);
      let inserted = 0;
      const backdated = new Date(Date.parse(sandbox.store.all()[700]!.created_at) + 1);
      const timer = setInterval(() => {
        // New clients stamped "now", and back-dated ones that shift every later page.
        sandbox.store.insert({ name: `new ${inserted}` });
        sandbox.store.insert({ name: `old ${inserted}`, created_at: backdated });
        inserted++;
      }, 5);
      const { ids, records, summary } = await exportIds(service, {
        direction,
        pageSize: 50,
        prefetch: 2,
      }).finally(() => clearInterval(timer));
      await service.close();
      await sandbox.close();
      expect(inserted).toBeGreaterThan(5);
      expect(new Set(ids).size).toBe(ids.length);
      const written = new Set(ids);
      expect([...before].filter((id) => !written.has(id))).toEqual([]);
      expect(summary.createdToPinned).toBe(true);
      for (const record of records) expect(record.created_at! <= summary.filters.createdTo).toBe(true);
      const late = sandbox.store.all().filter((c) => c.created_at > summary.filters.createdTo);
      expect(late.length).toBeGreaterThan(0);
      expect(late.filter((client) => written.has(client.id))).toEqual([]);
    });
  }
});
