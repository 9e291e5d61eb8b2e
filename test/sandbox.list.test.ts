import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Sandbox,
  type SandboxClient,
  SandboxStore,
  SEED_FROM,
  SEED_TO,
  startSandbox,
} from '../src/sandbox/index.js';
import { call, expectErrorShape } from './sandbox.helpers.js';

const SEED = 500;
let sandbox: Sandbox;
let base1: Sandbox;

beforeAll(async () => {
  [sandbox, base1] = await Promise.all([
    startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 7 }),
    startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 7, pageBase: 1 }),
  ]);
});
afterAll(() => Promise.all([sandbox?.close(), base1?.close()]));

function byTimeThenId(a: SandboxClient, b: SandboxClient): number {
  return a.created_at.localeCompare(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

async function allPages(target: Sandbox, query: string, first = 0): Promise<SandboxClient[]> {
  const out: SandboxClient[] = [];
  for (let page = first; ; page++) {
    const answer = await call(target, `/v1/clients?${query}&page=${page}&size=100`);
    expect(answer.status).toBe(200);
    out.push(...answer.json.data.clients);
    if (answer.json.data.clients.length < 100) return out;
  }
}

describe('List Clients paging and order', () => {
  it('defaults to page 0, size 20, asc, with an ISO string timestamp', async () => {
    const answer = await call(sandbox, '/v1/clients');
    expect(answer.status).toBe(200);
    expect(answer.json.status).toBe('success');
    expect(new Date(answer.json.timestamp).toISOString()).toBe(answer.json.timestamp);
    expect(answer.json.data).toMatchObject({ page: 0, size: 20, direction: 'asc' });
    expect(answer.json.data.clients).toEqual(sandbox.store.all().slice(0, 20));
  });

  it('pages through every client in (created_at, id) order, both directions', async () => {
    const asc = await allPages(sandbox, 'direction=asc');
    expect(asc).toHaveLength(SEED);
    expect(new Set(asc.map((c) => c.id)).size).toBe(SEED);
    expect(asc).toEqual([...asc].sort(byTimeThenId));
    const desc = await allPages(sandbox, 'direction=desc');
    expect(desc).toEqual([...asc].reverse());
  });

  it('returns an empty page past the end', async () => {
    const answer = await call(sandbox, '/v1/clients?page=99&size=100');
    expect(answer.json.data.clients).toEqual([]);
  });

  it('with page base 1 refuses page 0 and serves the same data from page 1', async () => {
    const zero = await call(base1, '/v1/clients?page=0');
    expect(zero.status).toBe(400);
    expect(zero.json.error).toMatchObject({ type: 'invalid_request_error', param: 'page' });
    expect((await call(base1, '/v1/clients')).json.data.page).toBe(1);
    expect(await allPages(base1, 'direction=desc', 1)).toEqual(await allPages(sandbox, 'direction=desc'));
  });

  it('sees a client inserted mid-export (the cached result follows the store)', async () => {
    const local = await startSandbox({ verifySignatures: false, seed: 50 });
    try {
      const before = await call(local, '/v1/clients?size=100');
      const middle = before.json.data.clients[25] as SandboxClient;
      const added = local.store.insert({ name: 'Late', created_at: middle.created_at, id: `${middle.id}z` });
      const after = await call(local, '/v1/clients?size=100');
      expect(after.json.data.clients).toHaveLength(51);
      expect(after.json.data.clients[26]).toEqual(added);
      expect(local.store.insert({ name: 'Now' }).created_at.slice(0, 4)).toBe(
        String(new Date().getUTCFullYear()),
      );
    } finally {
      await local.close();
    }
  });
});

describe('List Clients filters', () => {
  it('filters by comma lists of status and credit_status', async () => {
    const clients = await allPages(sandbox, 'status=approved,rejected&credit_status=active');
    const expected = sandbox.store
      .all()
      .filter((c) => ['approved', 'rejected'].includes(c.status) && c.credit_status === 'active');
    expect(clients.length).toBeGreaterThan(0);
    expect(clients).toEqual(expected);
  });

  it('accepts a repeated status parameter as a list', async () => {
    const repeated = await allPages(sandbox, 'status=approved&status=rejected');
    expect(repeated).toEqual(await allPages(sandbox, 'status=approved,rejected'));
  });

  it('has inclusive created_at bounds', async () => {
    const all = sandbox.store.all();
    const [a, b] = [all[100]!, all[200]!];
    const clients = await allPages(
      sandbox,
      `created_at.from=${encodeURIComponent(a.created_at)}&created_at.to=${encodeURIComponent(b.created_at)}`,
    );
    expect(clients[0]).toEqual(a);
    expect(clients.at(-1)).toEqual(b);
    expect(clients).toEqual(all.filter((c) => c.created_at >= a.created_at && c.created_at <= b.created_at));
  });

  it('reads a bare date as a whole UTC day, and date-times with offsets', async () => {
    const day = sandbox.store.all()[300]!.created_at.slice(0, 10);
    const clients = await allPages(sandbox, `created_at.from=${day}&created_at.to=${day}`);
    expect(clients.length).toBeGreaterThan(0);
    expect(clients.every((c) => c.created_at.startsWith(day))).toBe(true);
    const offset = await allPages(
      sandbox,
      `created_at.from=${day}T02:00:00%2B02:00&created_at.to=${day}T23:59:59.999999Z`,
    );
    expect(offset).toEqual(clients);
  });

  it.each([
    ['status=approved,unknown', 'status'],
    ['status=', 'status'],
    ['credit_status=maybe', 'credit_status'],
    ['created_at.from=yesterday', 'created_at.from'],
    ['created_at.to=2024-02-30', 'created_at.to'],
    ['created_at.from=2024-01-01T00:00:00+01:00', 'created_at.from'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['page=0&page=1', 'page'],
    ['size=0', 'size'],
    ['size=101', 'size'],
    ['size=ten', 'size'],
    ['direction=up', 'direction'],
    ['created_at_from=2024-01-01', 'created_at_from'],
  ])('refuses %s with 400 naming %s', async (query, param) => {
    const answer = await call(sandbox, `/v1/clients?${query}`);
    expect(answer.status).toBe(400);
    expectErrorShape(answer);
    expect(answer.json.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  it('hints at percent-encoding when a + offset arrived as a space', async () => {
    const answer = await call(sandbox, '/v1/clients?created_at.from=2024-01-01T00:00:00+01:00');
    expect(answer.json.error.message).toContain('%2B');
  });

  it('allows size up to maxPageSize', async () => {
    expect((await call(sandbox, '/v1/clients?size=100')).status).toBe(200);
    const local = await startSandbox({ verifySignatures: false, maxPageSize: 10 });
    try {
      expect((await call(local, '/v1/clients?size=11')).json.error.param).toBe('size');
    } finally {
      await local.close();
    }
  });
});

describe('seeding', () => {
  it('is deterministic for a seedRandom, and different for another', async () => {
    const [same, other] = await Promise.all([
      startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 7 }),
      startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 8 }),
    ]);
    try {
      expect(same.store.all()).toEqual(sandbox.store.all());
      expect(other.store.all()).not.toEqual(sandbox.store.all());
    } finally {
      await Promise.all([same.close(), other.close()]);
    }
  });

  it('varies everything an exporter must handle', () => {
    const all = sandbox.store.all();
    const statuses = new Set(all.map((c) => c.status));
    expect(statuses.size).toBe(5);
    expect(new Set(all.map((c) => c.credit_status)).size).toBe(2);
    const times = all.map((c) => Date.parse(c.created_at));
    expect(Math.min(...times)).toBeGreaterThanOrEqual(SEED_FROM);
    expect(Math.max(...times)).toBeLessThan(SEED_TO);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(600 * 86_400_000);
    const texts = all.flatMap((c) => [c.name, c.address, c.email]);
    expect(texts.some((t) => t.includes(','))).toBe(true);
    expect(texts.some((t) => t.includes('"'))).toBe(true);
    expect(texts.some((t) => t.includes('\n'))).toBe(true);
    expect(texts.some((t) => /[^\x00-\x7f]/.test(t))).toBe(true);
    for (const lead of ['=', '+', '-', '@'])
      expect(
        texts.some((t) => t.startsWith(lead)),
        lead,
      ).toBe(true);
    expect(new Set(all.map((c) => c.documents.length))).toEqual(new Set([0, 1, 2, 3]));
    expect(all.some((c) => c.bank_information.iban !== null)).toBe(true);
    expect(all.some((c) => c.bank_information.iban === null)).toBe(true);
    expect(new Set(all.map((c) => c.country)).size).toBeGreaterThan(5);
  });

  it('puts every formula-like and awkward name into even a small seed', async () => {
    const small = await startSandbox({ verifySignatures: false, seed: 60 });
    try {
      const names = small.store.all().map((c) => c.name);
      for (const lead of ['=', '+', '-', '@', '\t', '\r'])
        expect(
          names.some((n) => n.startsWith(lead)),
          lead,
        ).toBe(true);
      for (const part of [',', '"', '\n', '王'])
        expect(
          names.some((n) => n.includes(part)),
          part,
        ).toBe(true);
    } finally {
      await small.close();
    }
  });

  it('seeds 100,000 clients and pages through a filtered export of them', async () => {
    const big = await startSandbox({ verifySignatures: false, seed: 100_000 });
    try {
      expect(big.store.size).toBe(100_000);
      const clients = await allPages(big, 'direction=desc&status=approved&credit_status=active');
      expect(clients.length).toBeGreaterThan(5_000);
      expect(clients.every((c) => c.status === 'approved' && c.credit_status === 'active')).toBe(true);
    } finally {
      await big.close();
    }
  });
});

describe('the store', () => {
  const filter = { statuses: new Set(['approved']), creditStatuses: null, fromMs: null, toMs: null };

  it('caches a query result until the store changes', () => {
    const store = new SandboxStore();
    store.insertMany([{ status: 'approved' }, { status: 'rejected' }]);
    const first = store.query(filter, 'asc', 'approved|asc');
    expect(store.query(filter, 'asc', 'approved|asc')).toBe(first);
    const version = store.version;
    store.insert({ status: 'approved' });
    expect(store.version).toBe(version + 1);
    const second = store.query(filter, 'asc', 'approved|asc');
    expect(second).not.toBe(first);
    expect(second).toHaveLength(2);
  });

  it('hands out frozen clients, so cached JSON cannot go stale', () => {
    const store = new SandboxStore();
    const client = store.insert({ name: 'Frozen', created_at: '2024-03-01T10:00:00Z' });
    expect(client.created_at).toBe('2024-03-01T10:00:00.000Z');
    expect(Object.isFrozen(client) && Object.isFrozen(client.bank_information)).toBe(true);
    expect(() => {
      (client as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect(() => store.insert({ id: client.id })).toThrow(/duplicate/);
    expect(() => store.insert({ created_at: 'not a date' })).toThrow(RangeError);
  });
});
