/**
 * A broken or malicious service (a fake node:http server on 127.0.0.1): the import and export
 * stay bounded in time and memory, never record a client without an id, never follow a
 * redirect with the token, and keep their files valid CSV with no formula and no token.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CLIENT_HEADER, type CliOptions, makeTempDir, runCliInProcess, validRows, writeKeyFile } from './helpers.js';
import {
  type InProcessMeasuredResult,
  type MeasuredResult,
  RSS_GROWTH_LIMIT_MIB,
  RSS_LIMIT_MIB,
  runCliInProcessMeasured,
  runCliMeasured,
} from './hostile.helpers.js';

/** Not shaped like an lk_ key: only redaction of the exact value can hide it. */
const TOKEN = 'tok-4f1c9e-SECRET-77ab';

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

let handler: Handler;
let server: Server;
let other: Server;
let base: string;
let otherRequests = 0;
let otherAuthorized = 0;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let keyFile: string;
let input: string;
let runs = 0;
/** An import runs: its List Clients answers well (the export tests' pages are the hostile ones). */
let importing = false;

function listen(app: Server): Promise<string> {
  return new Promise((resolve) =>
    app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(app.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  temp = await makeTempDir();
  // Nothing here checks signatures: the run's shared key pair serves (making one costs seconds).
  keyFile = await writeKeyFile(temp.dir, inject('signingKeys').privateKeyPem);
  input = join(temp.dir, 'clients.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...validRows(1)]));
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      // List Clients (who the service holds, before the first row) answers well: an empty service.
      // The hostile answers are Create Client's.
      if (importing && request.method === 'GET' && request.url?.startsWith('/v1/clients?')) {
        json(response, 200, { status: 'ok', timestamp: '2026-01-01T00:00:00Z', data: { page: 0, size: 100, clients: [] } });
      } else handler(request, response, body);
    });
  });
  // A request that is never answered must not keep the server from closing.
  server.headersTimeout = 120_000;
  base = await listen(server);
  other = createServer((request, response) => {
    otherRequests++;
    if (request.headers.authorization !== undefined) otherAuthorized++;
    response.end('{}');
  });
  await listen(other);
});

afterAll(async () => {
  server.closeAllConnections();
  other.closeAllConnections();
  await Promise.all([server, other].map((app) => new Promise((resolve) => app.close(resolve))));
  await temp.cleanup();
});

function json(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(value));
}

/** Writes `total` bytes as fast as the client takes them, stopping when it hangs up. */
function stream(response: ServerResponse, total: number, headers: Record<string, string | number> = {}): void {
  response.writeHead(200, { 'content-type': 'application/json', ...headers });
  const chunk = Buffer.alloc(65_536, 0x20);
  let sent = 0;
  const more = () => {
    while (sent < total && !response.destroyed) {
      sent += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', more);
    }
    response.end();
  };
  response.on('close', () => {
    sent = total;
  });
  more();
}

interface ImportRun {
  code: number | null;
  stderr: string;
  stdout: string;
  results: string[][];
  resultsText: string;
  failedText: string;
  /** Peak RSS of the child, or (run in this process) what the run added to ours; and its bound. */
  memory: { mib: number; limit: number };
}

/**
 * The CLI in this process unless `child` (or the peak cannot be reset there), with its memory:
 * a child's peak RSS and its bound, or what the run added to ours and that bound.
 */
async function runMeasured(args: string[], options: CliOptions, child: boolean) {
  const measured: MeasuredResult | InProcessMeasuredResult =
    (child ? undefined : await runCliInProcessMeasured(args, options)) ?? (await runCliMeasured(args, options));
  const memory = 'rssGrowthMiB' in measured ? { mib: measured.rssGrowthMiB, limit: RSS_GROWTH_LIMIT_MIB } : { mib: measured.peakRssMiB, limit: RSS_LIMIT_MIB };
  return { ...measured, memory };
}

/**
 * Imports the one-row file. A run whose answers are small goes through the CLI in this
 * process, its memory as what it adds to this process's peak RSS; `child` where the memory of
 * a run reading without end is the point.
 */
async function runImport(extra: string[] = [], { child = false, timeout = '1' } = {}): Promise<ImportRun> {
  runs++;
  const results = join(temp.dir, `run-${runs}.results.csv`);
  const failed = join(temp.dir, `run-${runs}.failed.csv`);
  const args = ['import', input, '--results', results, '--failed', failed, '--retries', '0', '--timeout', timeout, '--json', ...extra];
  const options = { env: { CCS_BASE_URL: base, CCS_TOKEN: TOKEN, CCS_SIGNING_KEY_FILE: keyFile }, timeoutMs: 30_000 };
  importing = true;
  const run = await runMeasured(args, options, child).finally(() => {
    importing = false;
  });
  const resultsText = await readFile(results, 'utf8');
  const failedText = await readFile(failed, 'utf8');
  return {
    ...run,
    results: (parse(resultsText, { relax_column_count: true }) as string[][]).slice(1),
    resultsText,
    failedText,
  };
}

/**
 * The one row failed with `code`, nothing recorded as created, memory flat. A refused answer
 * that is every answer of the run stops it as systemic (exit 3), the row still failed.
 */
function expectFailedRow(run: ImportRun, code: string): void {
  const systemic = ['bad_response', 'redirect_refused', 'response_too_large'].includes(code);
  expect(run.code, run.stderr).toBe(systemic ? 3 : 1);
  if (systemic) expect(JSON.parse(run.stdout).stopped).toMatchObject({ code: 'systemic_response' });
  expect(run.results).toHaveLength(1);
  expect(run.results[0]!.slice(1, 3)).toEqual(['failed', '']);
  expect(run.results[0]![7]).toBe(code);
  expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 0, failed: 1 });
  expect(run.memory.mib).toBeLessThan(run.memory.limit);
}

describe('Create Client answers that cannot be trusted', () => {
  it('a body that never ends: the row fails once --timeout has passed since the headers', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"data":');
      const timer = setInterval(() => response.write(' '), 100);
      response.on('close', () => clearInterval(timer));
    };
    // 1 s: ten drips a --timeout, so a pause of this shared event loop is not taken for the gap.
    const run = await runImport([]);
    expectFailedRow(run, 'network');
    expect(run.results[0]![9]).toContain('not complete 1000 ms after its headers');
  });

  it('a body of 2 GB: refused past 4 MiB, memory flat', async () => {
    handler = (_request, response) => stream(response, 2 ** 31);
    const run = await runImport([], { child: true });
    expectFailedRow(run, 'response_too_large');
  });

  it('headers that never finish: the row fails after --timeout', async () => {
    handler = (_request, response) => {
      response.socket?.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n');
    };
    const run = await runImport([], { timeout: '0.3' });
    expectFailedRow(run, 'network');
    expect(run.results[0]![9]).toMatch(/Headers Timeout/i);
  });

  it.each([
    ['not JSON', '<html>gateway</html>'],
    ['not the envelope', '{"hello":"world"}'],
    ['data without id', '{"status":"ok","timestamp":1,"data":{"name":"x"}}'],
    ['an empty id', '{"status":"ok","timestamp":1,"data":{"id":""}}'],
    ['an id that is not text', '{"status":"ok","timestamp":1,"data":{"id":42}}'],
  ])('a 200 with %s: the row is failed (bad_response), never created without an id', async (_what, body) => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    };
    const run = await runImport();
    expectFailedRow(run, 'bad_response');
  });

  it('an id holding formula text and control characters: recorded escaped, valid CSV, and resume reads it back', async () => {
    const id = '=HYPERLINK("http://evil.example","x")\u0007,\r\n"';
    handler = (_request, response) => json(response, 200, { status: 'ok', timestamp: 1, data: { id } });
    const first = await runImport();
    expect(first.code, first.stderr).toBe(0);
    expect(first.results).toHaveLength(1);
    expect(first.results[0]![1]).toBe('created');
    // Escaped at its start and after the comma, where CR (a trigger too) begins a segment.
    expect(first.results[0]![2]).toBe(`'${id.replace(',\r', ",'\r")}`);
    expect(first.resultsText).not.toMatch(/(^|,)=HYPERLINK/m);

    // The same results file resumed: the row is skipped, its line kept as it was.
    const results = join(temp.dir, `run-${runs}.results.csv`);
    importing = true;
    const again = await runCliInProcess(['import', input, '--results', results, '--resume', '--json'], {
      env: { CCS_BASE_URL: base, CCS_TOKEN: TOKEN, CCS_SIGNING_KEY_FILE: keyFile },
    }).finally(() => {
      importing = false;
    });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).counts).toMatchObject({ skipped: 1, created: 0 });
    expect(await readFile(results, 'utf8')).toBe(first.resultsText);
  });

  it('an error message with formula text and terminal escapes: escaped in the results and failed files', async () => {
    handler = (_request, response) =>
      json(response, 422, {
        error: {
          type: '@invalid',
          code: '=cmd|\' /C calc\'!A0',
          message: "-2+3 \u001b[31mred\u001b[0m\nsecond line\u0000",
          param: '+name',
          request_id: 'req_1',
        },
      });
    const run = await runImport();
    expect(run.code).toBe(1);
    const [line] = run.results;
    expect(line!.slice(6, 9)).toEqual(["'@invalid", "'=cmd|' /C calc'!A0", "'+name"]);
    expect(line![9]).toBe("422 @invalid =cmd|' /C calc'!A0: -2+3 \\u001b[31mred\\u001b[0m\\u000asecond line\\u0000");
    for (const text of [run.resultsText, run.failedText, run.stderr]) {
      expect(text).not.toContain('\u001b');
      expect(text).not.toContain('\u0000');
    }
    const failed = parse(run.failedText) as string[][];
    // The failed file's error opens with where the row came from, then the same escaped message.
    expect(failed[1]!.at(-1)).toMatch(/^\S+ line 2 \(data row 1\): /);
    expect(failed[1]!.at(-1)!.replace(/^\S+ line 2 \(data row 1\): /, '')).toBe(line![9]);
    for (const cells of [...failed, ...run.results]) {
      for (const cell of cells) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    }
  });

  it('the token echoed back in an error is redacted from the results file, failed file, stdout and stderr', async () => {
    const echo = (status: number) => (request: IncomingMessage, response: ServerResponse) =>
      json(response, status, {
        error: {
          type: 'invalid_request_error',
          code: `bad_${TOKEN}`,
          message: `you sent ${request.headers.authorization} and ${TOKEN}`,
          param: TOKEN,
          request_id: `req_${TOKEN}`,
        },
      });
    handler = echo(400);
    const run = await runImport();
    expect(run.code).toBe(1);
    expect(run.results[0]![9]).toContain('you sent Bearer [redacted] and [redacted]');
    handler = echo(401);
    const stopped = await runImport();
    expect(stopped.code).toBe(3);
    expect(stopped.stderr).toContain('[redacted]');
    for (const each of [run, stopped]) {
      for (const text of [each.resultsText, each.failedText, each.stdout, each.stderr]) expect(text).not.toContain(TOKEN);
    }
  });

  it('a redirect to another host is not followed: the token never reaches it', async () => {
    const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    for (const status of [301, 302, 307, 308]) {
      handler = (_request, response) => {
        response.writeHead(status, { location: `${elsewhere}/v1/client` });
        response.end();
      };
      const run = await runImport();
      expectFailedRow(run, 'redirect_refused');
      expect(run.results[0]![9]).toContain(`redirect (HTTP ${status}) to ${elsewhere}/v1/client`);
    }
    expect(otherRequests).toBe(0);
    expect(otherAuthorized).toBe(0);
  });
});

describe('List Clients answers that cannot be trusted', () => {
  /** As runImport: in this process unless `child` (a page that streams without end). */
  async function runExport({ child = false } = {}) {
    runs++;
    const out = join(temp.dir, `export-${runs}.csv`);
    const args = ['export', '--out', out, '--retries', '0', '--timeout', '5'];
    const options = { env: { CCS_BASE_URL: base, CCS_TOKEN: TOKEN }, timeoutMs: 30_000 };
    const run = await runMeasured(args, options, child);
    const written = await readFile(out, 'utf8').then(
      () => true,
      () => false,
    );
    return { ...run, written };
  }

  it('a page announcing 2 GB (Content-Length): the export fails loudly without reading it, memory flat', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * 1024 ** 3) });
      response.write('{"data":{"page":0,');
    };
    const run = await runExport();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('announces 2147483648 bytes, more than the 4 MiB a response may hold');
    expect(run.written).toBe(false);
    expect(run.memory.mib).toBeLessThan(run.memory.limit);
  });

  it('a page streaming gigabytes without a length: refused past 4 MiB, memory flat', async () => {
    handler = (_request, response) => stream(response, 2 ** 31);
    const run = await runExport({ child: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('went past 4194304 bytes');
    expect(run.written).toBe(false);
    expect(run.memory.mib).toBeLessThan(run.memory.limit);
  });

  it('a redirect: the export fails loudly and the token stays here', async () => {
    const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    handler = (_request, response) => {
      response.writeHead(302, { location: `${elsewhere}/v1/clients` });
      response.end();
    };
    const run = await runExport();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('redirects are not followed');
    expect(otherRequests).toBe(0);
  });
});
