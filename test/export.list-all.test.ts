/**
 * listAllClients: the export's pager as objects. Every client once whatever the page base, the
 * filters as exportClients checks them (Dates too), a snapshot fixed when the loop starts, an
 * abort that ends the loop, and a loop left early that requests nothing more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoppedError, UsageError } from '../src/errors.js';
import { listAllClients } from '../src/export/list-all.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import type { Client } from '../src/service/schemas.js';

const COUNT = 250;
const START = Date.parse('2025-01-01T00:00:00.000Z');
const MINUTE = 60_000;
let sandbox: Sandbox;
let service: ServiceClient;

beforeAll(async () => {
  // 1-based pages: the pager finds the base as the export does.
  sandbox = await startSandbox({ verifySignatures: false, pageBase: 1 });
  sandbox.store.insertMany(
    Array.from({ length: COUNT }, (_, i) => ({
      name: `Client ${i}`,
      email: `client${i}@example.com`,
      status: i % 3 === 0 ? ('approved' as const) : ('pending_review' as const),
      credit_status: i % 2 === 0 ? ('active' as const) : ('inactive' as const),
      created_at: new Date(START + i * MINUTE),
    })),
  );
  service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

async function collect(clients: AsyncIterable<Client>): Promise<Client[]> {
  const found: Client[] = [];
  for await (const client of clients) found.push(client);
  return found;
}

const idsOf = (clients: readonly { id: string }[]) => clients.map((client) => client.id);

describe('listAllClients', () => {
  it('yields every client once, in created_at order, page after page', async () => {
    const clients = await collect(listAllClients(service, { pageSize: 20 }));
    expect(clients).toHaveLength(COUNT);
    expect(idsOf(clients)).toEqual(idsOf(sandbox.store.all()));
    expect(clients[0]).toMatchObject({ name: 'Client 0', email: 'client0@example.com', created_at: '2025-01-01T00:00:00.000Z' });
    const descending = await collect(listAllClients(service, { pageSize: 20, direction: 'desc' }));
    expect(idsOf(descending)).toEqual(idsOf(sandbox.store.all()).reverse());
  });

  it('filters by status, credit status and created_at bounds given as Dates or as text', async () => {
    const from = new Date(START + 30 * MINUTE);
    const to = new Date(START + 120 * MINUTE);
    const expected = sandbox.store
      .all()
      .filter((client) => client.status === 'approved' && client.credit_status === 'active')
      .filter((client) => Date.parse(client.created_at) >= from.getTime() && Date.parse(client.created_at) <= to.getTime());
    expect(expected.length).toBeGreaterThan(5);
    const byDates = await collect(
      listAllClients(service, { status: ['approved'], creditStatus: 'active', createdFrom: from, createdTo: to, pageSize: 7 }),
    );
    expect(idsOf(byDates)).toEqual(idsOf(expected));
    const byText = await collect(
      listAllClients(service, { status: 'approved', creditStatus: ['active'], createdFrom: from.toISOString(), createdTo: to.toISOString() }),
    );
    expect(idsOf(byText)).toEqual(idsOf(expected));
    // A bare date is a whole day, as in the export: all of them are on 2025-01-01.
    expect(await collect(listAllClients(service, { createdFrom: '2025-01-01', createdTo: '2025-01-01' }))).toHaveLength(COUNT);
  });

  it('refuses a bad filter at the call, naming the option, before any request', () => {
    const before = sandbox.stats.requests;
    for (const [options, words] of [
      [{ status: 'aproved' }, /status.*approved/],
      [{ createdFrom: new Date('not a date') }, /createdFrom/],
      [{ createdFrom: new Date(START + MINUTE), createdTo: new Date(START) }, /createdFrom .* is after createdTo/],
      [{ pageSize: 0 }, /pageSize must be a whole number/],
    ] as const) {
      let thrown: unknown;
      try {
        listAllClients(service, options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UsageError);
      expect(thrown).toMatchObject({ code: 'bad_option', message: expect.stringMatching(words) });
    }
    expect(sandbox.stats.requests).toBe(before);
  });

  it('lists the clients there were when the loop started: one created meanwhile is left for the next', async () => {
    const seen: string[] = [];
    let created: string | undefined;
    for await (const client of listAllClients(service, { pageSize: 25, prefetch: 1 })) {
      seen.push(client.id);
      // Created after the loop started: past its pinned upper bound.
      if (seen.length === 1) created = sandbox.store.insert({ name: 'Late', created_at: new Date(Date.now() + 5) }).id;
    }
    expect(seen).toHaveLength(COUNT);
    expect(seen).not.toContain(created);
    const later = await collect(listAllClients(service, { createdTo: new Date(Date.now() + 60_000) }));
    expect(idsOf(later)).toContain(created);
  });

  it('ends the loop with a StoppedError carrying the reason when its signal aborts, mid-page too', async () => {
    const controller = new AbortController();
    const seen: Client[] = [];
    const loop = (async () => {
      for await (const client of listAllClients(service, { pageSize: 10, prefetch: 2, signal: controller.signal })) {
        seen.push(client);
        if (seen.length === 15) controller.abort(new Error('shutting down'));
      }
    })();
    await expect(loop).rejects.toBeInstanceOf(StoppedError);
    await expect(loop).rejects.toMatchObject({ code: 'interrupted', cause: new Error('shutting down') });
    expect(seen).toHaveLength(15);
  });

  it('leaving the loop early stops the paging and leaves nothing open: the sandbox and client close', async () => {
    const own = await startSandbox({ verifySignatures: false, seed: 500 });
    const client = createServiceClient({ baseUrl: own.url, token: own.token });
    const first: string[] = [];
    for await (const found of listAllClients(client, { pageSize: 20, prefetch: 3 })) {
      first.push(found.id);
      if (first.length === 5) break;
    }
    expect(first).toHaveLength(5);
    // The first page, and at most the pages requested ahead of the loop.
    expect(own.stats.requests).toBeLessThanOrEqual(1 + 3);
    await client.close();
    await own.close();
  });
});
