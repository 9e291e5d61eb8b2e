/** Shared plumbing for the export tests: expected subsets, output capture, a misbehaving server. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { parse } from 'csv-parse/sync';
import type { SandboxClient } from '../src/sandbox/index.js';

export interface Subset {
  status?: readonly string[];
  creditStatus?: readonly string[];
  /** inclusive, ms */
  fromMs?: number;
  toMs?: number;
}

/** The ids List Clients should return for `subset`, computed from the store, not the server. */
export function expectedIds(all: readonly SandboxClient[], subset: Subset = {}): Set<string> {
  const ids = new Set<string>();
  for (const client of all) {
    const ms = Date.parse(client.created_at);
    if (subset.status && !subset.status.includes(client.status)) continue;
    if (subset.creditStatus && !subset.creditStatus.includes(client.credit_status)) continue;
    if (subset.fromMs !== undefined && ms < subset.fromMs) continue;
    if (subset.toMs !== undefined && ms > subset.toMs) continue;
    ids.add(client.id);
  }
  return ids;
}

/** Records of a CSV export, keyed by header. Strict parsing: a broken quote fails the test. */
export function parseCsv(text: string): Record<string, string>[] {
  return parse(text, { columns: true, bom: true, relax_quotes: false }) as Record<string, string>[];
}

/**
 * A writable that keeps what it is given, with a small buffer so backpressure really happens.
 * `text()` ends it and waits until every accepted write has been processed.
 */
export function collector(): Writable & { text(): Promise<string> } {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      // Asynchronous on purpose: the exporter must wait for 'drain'.
      setImmediate(done);
    },
  });
  const text = async () => {
    if (!sink.writableEnded) sink.end();
    await finished(sink);
    return Buffer.concat(chunks).toString('utf8');
  };
  return Object.assign(sink, { text });
}

export interface FakeReply {
  status?: number;
  /** ids of the clients on this page */
  ids?: readonly string[];
  /** `data.size` to report; default the size asked for */
  size?: number;
  error?: { type?: string; code?: string; message?: string; param?: string };
}

export interface FakeService {
  url: string;
  /** page numbers asked for, in order */
  pages: number[];
  close(): Promise<void>;
}

/**
 * A tiny List Clients server whose pages come from `pageFor`: for servers the sandbox does not
 * emulate (repeating pages, clamping page 0, capping the size, answering one page late).
 */
export async function startFakeService(
  pageFor: (page: number, size: number) => FakeReply | Promise<FakeReply>,
): Promise<FakeService> {
  const pages: number[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const page = Number(url.searchParams.get('page') ?? '0');
    const size = Number(url.searchParams.get('size') ?? '20');
    pages.push(page);
    const reply = await pageFor(page, size);
    const status = reply.status ?? 200;
    const body =
      status === 200
        ? {
            status: 'success',
            timestamp: new Date().toISOString(),
            data: {
              page,
              size: reply.size ?? size,
              direction: 'asc',
              clients: (reply.ids ?? []).map((id) => ({ id, name: `Client ${id}` })),
            },
          }
        : { error: { type: 'invalid_request_error', code: 'invalid', message: 'refused', ...reply.error } };
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pages,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** ids `prefix0 … prefix(n-1)` */
export function idRange(prefix: string, from: number, to: number): string[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => `${prefix}${from + i}`);
}

/**
 * `ccs-bulk ARGS` in this process (where the process itself is not the point): the exit code and
 * the error line as main.ts would print them.
 */
export async function exportCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { PassThrough } = await import('node:stream');
  const { runCli } = await import('../src/cli/cli.js');
  const { isCcsError } = await import('../src/errors.js');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  let code: number;
  try {
    code = await runCli(args, env, { stdout, stderr });
  } catch (error) {
    if (!isCcsError(error)) throw error;
    stderr.write(`ccs-bulk: error: ${error.message} [${error.code}]\n`);
    code = error.exitCode;
  }
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
