/**
 * A response body arriving in many chunks is put together in a buffer the client keeps between
 * responses: every byte lands where it belongs (a character split between chunks included),
 * answers read at the same time never mix, and a body larger than the kept buffer is read whole.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';

let server: Server;
let service: ServiceClient;

/** A client name for page `page`, client `i`: two-, three- and four-byte UTF-8 characters. */
function nameOf(page: number, i: number): string {
  return `Łódź ${page}/${i} €${'ñ'.repeat(i % 7)} 😀 Zürich`;
}

/** The page's JSON, big when asked: `clients` clients with long names. */
function pageBody(page: number, clients: number, pad: number): Buffer {
  const data = {
    page,
    size: clients,
    direction: 'asc',
    clients: Array.from({ length: clients }, (_, i) => ({ id: `cli_${page}_${i}`, name: nameOf(page, i), address: 'ä'.repeat(pad) })),
  };
  return Buffer.from(JSON.stringify({ status: 'success', timestamp: '2025-01-01T00:00:00.000Z', data }), 'utf8');
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const page = Number(url.searchParams.get('page'));
    const size = Number(url.searchParams.get('size'));
    // Page 99: past the 2 MiB the client keeps (ä is two bytes).
    const body = pageBody(page, size, page === 99 ? 30_000 : 10);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    // Odd-sized pieces, each flushed on its own: multi-byte characters fall across them.
    const piece = 997 + page * 13;
    let at = 0;
    const next = () => {
      if (at >= body.length) return void response.end();
      const end = Math.min(body.length, at + piece);
      response.write(body.subarray(at, end));
      at = end;
      setImmediate(next);
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  service = createServiceClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'lk_sandbox_test', connections: 8, retry: { retries: 0 } });
});

afterAll(async () => {
  await service.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
});

describe('response bodies in many chunks', () => {
  it('decodes characters split between chunks, and answers read at once do not mix', async () => {
    const pages = Array.from({ length: 12 }, (_, page) => page);
    const replies = await Promise.all(pages.map((page) => service.listClients({ page, size: 40 + page })));
    for (const [page, reply] of replies.entries()) {
      expect(reply.data.page).toBe(page);
      expect(reply.data.clients).toHaveLength(40 + page);
      for (const [i, client] of reply.data.clients.entries()) {
        expect(client.id).toBe(`cli_${page}_${i}`);
        expect(client.name).toBe(nameOf(page, i));
        expect(client.address).toBe('ä'.repeat(10));
      }
    }
  });

  it('reads a body larger than the buffer it keeps, then a small one, both whole', async () => {
    const large = await service.listClients({ page: 99, size: 40 });
    expect(large.data.clients.map((client) => client.address)).toEqual(Array.from({ length: 40 }, () => 'ä'.repeat(30_000)));
    const small = await service.listClients({ page: 3, size: 5 });
    expect(small.data.clients.map((client) => client.name)).toEqual(Array.from({ length: 5 }, (_, i) => nameOf(3, i)));
  });
});
