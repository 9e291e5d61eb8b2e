/**
 * A sandbox that can rehearse any week: its clock (a start instant that runs on, moved over
 * HTTP or from the library), clients stored with a given created_at through its admin route,
 * and a seed whose two years end at the clock's now. None of it is part of the service contract.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSandbox } from '../src/commands/sandbox.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { call, create, expectErrorShape, validBody } from './sandbox.helpers.js';
import { waitFor } from './stream.helpers.js';

const START = Date.parse('2026-03-01T00:00:00.000Z');
/** Slack for real time passing between the clock's start and a request: far more than a request takes. */
const SLACK_MS = 60_000;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, clock: '2026-03-01T00:00:00Z' });
});
afterAll(() => sandbox?.close());

const post = (path: string, body: unknown) =>
  call(sandbox, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('the sandbox clock', () => {
  it('starts where it was set and runs on: Create Client stamps its time', async () => {
    const answer = await create(sandbox, validBody());
    expect(answer.status).toBe(200);
    const created = Date.parse(answer.json.data.created_at);
    expect(created).toBeGreaterThanOrEqual(START);
    expect(created).toBeLessThan(START + SLACK_MS);
    expect(sandbox.now().getTime()).toBeGreaterThanOrEqual(created);
  });

  it('GET /_sandbox/clock reads it; POST moves it; the library moves it too', async () => {
    const read = await call(sandbox, '/_sandbox/clock');
    expect(read.status).toBe(200);
    expect(Date.parse(read.json.data.now)).toBeGreaterThanOrEqual(START);
    const moved = await post('/_sandbox/clock', { now: '2026-12-31T23:59:00Z' });
    expect(moved.status).toBe(200);
    const created = Date.parse((await create(sandbox, validBody())).json.data.created_at);
    expect(created - Date.parse('2026-12-31T23:59:00Z')).toBeLessThan(SLACK_MS);
    sandbox.setClock('2027-06-01T12:00:00Z');
    expect(Date.parse(sandbox.store.insert().created_at) - Date.parse('2027-06-01T12:00:00Z')).toBeLessThan(SLACK_MS);
    const bad = await post('/_sandbox/clock', { now: 'next tuesday' });
    expect(bad.status).toBe(400);
    expectErrorShape(bad);
    expect(bad.json.error.param).toBe('now');
  });

  it('a clock given as a function is the caller\'s: read on every create, not moved by HTTP', async () => {
    let now = new Date('2030-02-28T23:00:00.000Z');
    const owned = await startSandbox({ verifySignatures: false, clock: () => now });
    try {
      expect(owned.store.insert().created_at).toBe('2030-02-28T23:00:00.000Z');
      now = new Date('2030-03-31T22:00:00.000Z');
      expect(owned.store.insert().created_at).toBe('2030-03-31T22:00:00.000Z');
      expect(() => owned.setClock('2030-01-01T00:00:00Z')).toThrow(/a function of its caller/);
    } finally {
      await owned.close();
    }
  });
});

describe('POST /_sandbox/clients: a client with the created_at given', () => {
  it('stores it as given, in List Clients order and bounds', async () => {
    const answer = await post('/_sandbox/clients', { name: 'Back-dated GmbH', created_at: '2025-07-14T08:30:00+02:00', status: 'approved', credit_status: 'active', country: 'DE' });
    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({ name: 'Back-dated GmbH', created_at: '2025-07-14T06:30:00.000Z', status: 'approved', credit_status: 'active', country: 'DE' });
    const listed = await call(sandbox, '/v1/clients?created_at.from=2025-07-14T06:30:00.000Z&created_at.to=2025-07-14T06:30:00.000Z');
    expect(listed.json.data.clients.map((client: { id: string }) => client.id)).toEqual([answer.json.data.id]);
  });

  it('without created_at it is the clock\'s now', async () => {
    sandbox.setClock('2026-05-04T09:00:00Z');
    const answer = await post('/_sandbox/clients', { name: 'Today Ltd' });
    expect(Date.parse(answer.json.data.created_at) - Date.parse('2026-05-04T09:00:00Z')).toBeLessThan(SLACK_MS);
  });

  it.each([
    [{ created_at: 'yesterday' }, 'created_at'],
    [{ status: 'accepted' }, 'status'],
    [{ credit_status: 'on' }, 'credit_status'],
    [{ name: 7 }, 'name'],
    ['[1]', 'body'],
  ])('refuses %o (400, param %s)', async (body, param) => {
    const answer = typeof body === 'string' ? await call(sandbox, '/_sandbox/clients', { method: 'POST', body }) : await post('/_sandbox/clients', body);
    expect(answer.status).toBe(400);
    expectErrorShape(answer);
    expect(answer.json.error.param).toBe(param);
  });

  it('refuses an id that exists (409) and other methods (405)', async () => {
    const first = await post('/_sandbox/clients', { id: 'cli_dated_1', created_at: '2026-01-01T00:00:00Z' });
    expect(first.status).toBe(200);
    expect((await post('/_sandbox/clients', { id: 'cli_dated_1' })).status).toBe(409);
    const get = await call(sandbox, '/_sandbox/clients');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
  });
});

describe('a seed up to now', () => {
  it('ends at the clock\'s now (so this week has clients), the same for the same seed and clock', async () => {
    const options = { verifySignatures: false, seed: 400, clock: '2026-11-23T00:00:00Z', seedUntil: 'now' } as const;
    const [a, b] = [await startSandbox(options), await startSandbox(options)];
    try {
      const dates = a.store.all().map((client) => Date.parse(client.created_at));
      const now = Date.parse('2026-11-23T00:00:00Z');
      expect(Math.max(...dates)).toBeLessThanOrEqual(now + SLACK_MS);
      expect(Math.min(...dates)).toBeGreaterThan(now - 731 * 86_400_000);
      expect(dates.filter((ms) => ms > now - 14 * 86_400_000).length).toBeGreaterThan(0);
      // Both clocks started at the same instant, each a moment later: the dates differ by that moment only.
      const shift = Date.parse(b.store.all()[0]!.created_at) - Date.parse(a.store.all()[0]!.created_at);
      expect(Math.abs(shift)).toBeLessThan(SLACK_MS);
      expect(b.store.all().map((client) => client.id)).toEqual(a.store.all().map((client) => client.id));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a seed until a fixed instant is exactly the same every time', async () => {
    const options = { verifySignatures: false, seed: 50, seedUntil: '2026-11-23T00:00:00Z' } as const;
    const [a, b] = [await startSandbox(options), await startSandbox(options)];
    try {
      expect(b.store.all()).toEqual(a.store.all());
      expect(Math.max(...a.store.all().map((client) => Date.parse(client.created_at)))).toBeLessThan(Date.parse('2026-11-23T00:00:00Z'));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('ccs-bulk sandbox --clock --seed-until now says where its clock stands', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const stop = new AbortController();
    const running = runSandbox(
      { port: 0, seed: 20, seedUntil: 'now', clock: '2026-11-23T00:00:00Z', verifySignatures: false },
      { stdout: out, stderr: new PassThrough(), signal: stop.signal },
    );
    await waitFor(() => text.includes('Press Ctrl-C'));
    stop.abort();
    await running;
    expect(text).toMatch(/ {2}clock: {8}2026-11-23T00:00:\d\d\.\d{3}Z \(--clock; it runs on, POST \/_sandbox\/clock moves it\)/);
  });
});
