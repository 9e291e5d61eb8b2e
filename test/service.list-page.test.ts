/**
 * A List Clients page is taken as parsed, without zod's copy of every client, only when zod
 * would keep it as it is: any other page goes through zod. So every page is accepted or refused
 * as zod decides, with zod's issues, and yields what zod would yield, to the key order (the
 * documents cell is written in it). Checked on pages mutated at random (a fixed seed), and end
 * to end: a bad page fails with zod's reasons in the message.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../src/errors.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import { envelopeSchema, listEnvelope, listPageSchema } from '../src/service/schemas.js';

const zodEnvelope = envelopeSchema(listPageSchema);

function goodPage(): Record<string, unknown> {
  return {
    status: 'success',
    timestamp: '2026-01-01T00:00:00.000Z',
    data: {
      page: 0,
      size: 100,
      direction: 'asc',
      clients: [
        {
          id: 'cli_1',
          name: 'Łódź 😀',
          status: 'approved',
          credit_status: 'active',
          created_at: '2024-01-01T00:00:00.000Z',
          email: 'a@example.com',
          country: 'DE',
          address: 'Main Street 1',
          currency: null,
          bank_information: { iban: 'DE00', account_number: null, swift_code: 'X' },
          documents: [{ name: 'a.pdf', key: 'doc_1', status: 'rejected', reason: 'blurred' }],
        },
        { id: 'cli_2', name: null, documents: [] },
      ],
    },
  };
}

/** A small deterministic generator (the same mutations on every run). */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

const VALUES: unknown[] = [null, '', 'x', 0, 3, -0, 1.5, 2 ** 60, true, [], {}, ['a'], { a: 1 }, '3'];
const KEYS = ['id', 'name', 'extra', '__proto__', '7', 'iban', 'reason', 'documents', 'bank_information', 'page', 'size', 'direction', 'status', 'clients'];

/** Every path into `value`, the root excluded. */
function pathsOf(value: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (path.length > 0) out.push(path);
  if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) pathsOf((value as Record<string, unknown>)[key], [...path, key], out);
  return out;
}

/** One random change: a value replaced, a key removed, moved last, or added. */
function mutate(body: Record<string, unknown>, random: () => number): void {
  const paths = pathsOf(body);
  const path = paths[Math.floor(random() * paths.length)]!;
  let parent = body as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const key = path.at(-1)!;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const roll = random();
  if (roll < 0.4) parent[key] = structuredClone(pick(VALUES));
  else if (roll < 0.6) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
  } else if (!Array.isArray(parent)) {
    const moved = roll < 0.8 ? String(key) : pick(KEYS);
    const value = roll < 0.8 ? parent[key] : structuredClone(pick(VALUES));
    delete parent[moved];
    Object.defineProperty(parent, moved, { value, enumerable: true, writable: true, configurable: true });
  }
}

describe('List Clients pages: taken as parsed only when zod would keep them as they are', () => {
  it('accepts, refuses and yields exactly as zod does, on pages mutated at random', () => {
    const random = generator(7);
    let quick = 0;
    for (let i = 0; i < 4000; i++) {
      const body = goodPage();
      const changes = i % 10 === 0 ? 0 : 1 + Math.floor(random() * 3);
      for (let c = 0; c < changes; c++) mutate(body, random);
      const text = JSON.stringify(body);
      const input = JSON.parse(text) as { data?: { clients?: unknown } };
      const ours = listEnvelope.safeParse(input);
      const reference = zodEnvelope.safeParse(JSON.parse(text));
      expect(ours.success, text).toBe(reference.success);
      if (ours.success && reference.success) {
        expect(JSON.stringify(ours.data.data), text).toBe(JSON.stringify(reference.data.data));
        expect(isDeepStrictEqual(ours.data.data, reference.data.data), text).toBe(true);
        if (ours.data.data.clients === input.data?.clients) quick++;
      } else if (!ours.success && !reference.success) {
        expect(ours.error.issues, text).toEqual(reference.error.issues);
      }
    }
    // The unchanged pages, and those changed in ways zod keeps, took the quick way.
    expect(quick).toBeGreaterThan(400);
  });
});

describe('a bad page from the service', () => {
  let server: Server;
  let service: ServiceClient;
  let body = '';
  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    service = createServiceClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'lk_sandbox_test', retry: { retries: 0 }, breaker: false });
  });
  afterAll(async () => {
    await service.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['a client without an id', (page: Record<string, unknown>) => delete (page.data as { clients: Record<string, unknown>[] }).clients[1]!.id, 'data.clients.1.id'],
    ['a document name that is a number', (page: Record<string, unknown>) => ((page.data as { clients: { documents: Record<string, unknown>[] }[] }).clients[0]!.documents[0]!.name = 5), 'data.clients.0.documents.0.name'],
    ['a page number that is not one', (page: Record<string, unknown>) => ((page.data as Record<string, unknown>).page = 'first'), 'data.page'],
  ])('%s: bad_response, with the path zod names', async (_what, change, path) => {
    const page = goodPage();
    change(page);
    body = JSON.stringify(page);
    const error = await service.listClients({ page: 0, size: 100 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('bad_response');
    expect((error as ServiceError).message).toContain(`${path}: `);
  });

  it('a good page: every client, as sent', async () => {
    const page = goodPage();
    body = JSON.stringify(page);
    const reply = await service.listClients({ page: 0, size: 100 });
    expect(JSON.stringify(reply.data)).toBe(JSON.stringify({ page: 0, size: 100, direction: 'asc', clients: (page.data as { clients: unknown }).clients }));
  });
});
