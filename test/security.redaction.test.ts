/**
 * Secrets never reach an output: a proxy URL's password (in --print-config, the `to continue:`
 * line, the review page, the log), and the run's token echoed back by a service in another
 * letter case or base64-encoded (in the results file, the --failed file, the log, the review
 * page, stdout and stderr).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { redactSecrets, redactToken } from '../src/infra/redact.js';
import { CLIENT_HEADER, makeTempDir, runCliInProcess, shellWords, useSandbox, validRows, writeKeyFile } from './helpers.js';
import { startProxy } from './proxy.helpers.js';

const ctx = useSandbox();

const PASSWORD = 'pr0xy-P@ss word';
/** As typed: the `@` and the space in the password left as they are, as a user would. */
const proxyUrl = (port: number) => `http://migrator:${PASSWORD}@127.0.0.1:${port}`;

let files = 0;
async function input(rows = 2): Promise<string> {
  files++;
  const file = join(ctx.dir, `clients-${files}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, files * 1000)]));
  return file;
}

/** No proxy variable leaks in from the machine running the tests. */
const NO_PROXY_ENV = { HTTPS_PROXY: undefined, https_proxy: undefined, HTTP_PROXY: undefined, http_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

function expectNoPassword(text: string): void {
  for (const part of [PASSWORD, 'pr0xy', 'ss word']) expect(text).not.toContain(part);
}

describe('a proxy URL with credentials', () => {
  it('--print-config shows --proxy and CCS_PROXY without the password', async () => {
    const file = await input();
    for (const [args, env] of [
      [['--proxy', proxyUrl(3128)], {}],
      [[`--proxy=${proxyUrl(3128)}`], {}],
      [[], { CCS_PROXY: proxyUrl(3128) }],
    ] as const) {
      const run = await runCliInProcess(['import', file, '--sandbox', ...args, '--print-config'], { env: { ...NO_PROXY_ENV, ...env } });
      expect(run.code, run.stderr).toBe(0);
      expectNoPassword(run.stdout + run.stderr);
      expect(JSON.parse(run.stdout).settings.proxy.value).toBe('http://[redacted]@127.0.0.1:3128');
    }
  });

  it('a stopped run: the `to continue:` line, the review page and the log show no password', async () => {
    // A proxy that was there a moment ago: the run stops at once (exit 2) and prints how to continue.
    const gone = await startProxy();
    await gone.close();
    const file = await input();
    const report = join(ctx.dir, 'stopped.html');
    const log = join(ctx.dir, 'stopped.log');
    for (const proxy of [['--proxy', proxyUrl(gone.port)], [`--proxy=${proxyUrl(gone.port)}`]]) {
      const run = await runCliInProcess(['import', file, ...proxy, '--report', report, '--log-file', log, '--overwrite'], {
        env: { ...NO_PROXY_ENV, ...ctx.env() },
      });
      expect(run.code, run.stderr).toBe(2);
      const resume = /to continue: (.*)/.exec(run.stderr)?.[1];
      expect(resume).toBeDefined();
      const words = shellWords(resume!);
      expect(words.some((word) => word.endsWith(`http://[redacted]@127.0.0.1:${gone.port}`))).toBe(true);
      expect(words.at(-1)).toBe('--resume');
      const page = await readFile(report, 'utf8');
      expect(page).toContain('[redacted]@127.0.0.1');
      for (const text of [run.stdout, run.stderr, page, await readFile(log, 'utf8')]) expectNoPassword(text);
    }
  });
});

/** Not shaped like an lk_ key, and in mixed case: only the run's own token can hide its other forms. */
const TOKEN = 'tok_9fQ2xZ-Secret-k7Lm4Np8wR';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const base64url = (text: string) => Buffer.from(text).toString('base64url');

/** What a careless service echoes: the token as seen, upper- and lower-cased, and base64-encoded alone or in a header or a JSON text. */
function echoes(authorization: string): string[] {
  return [
    TOKEN.toUpperCase(),
    TOKEN.toLowerCase(),
    authorization.toUpperCase(),
    base64(TOKEN),
    base64url(TOKEN),
    base64(authorization),
    base64url(authorization),
    base64(`{"token":"${TOKEN}"}`),
    base64(`user:${TOKEN.toUpperCase()}`),
  ];
}

/**
 * Whether `text` still holds the token in a form someone could read back: 8 characters of it
 * in any case, or inside any base64 (standard or URL-safe) run, decoded from any of its 4 starts.
 */
function leaksToken(text: string, token = TOKEN): string | undefined {
  const pieces = Array.from({ length: token.length - 7 }, (_, i) => token.slice(i, i + 8).toLowerCase());
  const holds = (candidate: string) => pieces.find((piece) => candidate.toLowerCase().includes(piece));
  if (holds(text)) return `plain: ${holds(text)}`;
  for (const [run] of text.matchAll(/[A-Za-z0-9+/_-]{8,}/g)) {
    const standard = run.replace(/-/g, '+').replace(/_/g, '/');
    for (let skip = 0; skip < 4; skip++) {
      const part = standard.slice(skip, skip + Math.floor((standard.length - skip) / 4) * 4);
      const found = holds(Buffer.from(part, 'base64').toString('latin1'));
      if (found) return `base64 ${run}: ${found}`;
    }
  }
  return undefined;
}

describe('the token echoed back by a service', () => {
  let server: Server;
  let base: string;
  let status = 422;
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  let keyFile: string;

  beforeAll(async () => {
    temp = await makeTempDir();
    keyFile = await writeKeyFile(temp.dir, inject('signingKeys').privateKeyPem);
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      request.on('end', () => {
        const forms = echoes(request.headers.authorization ?? '');
        response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${base64url(TOKEN)}` });
        response.end(
          JSON.stringify({
            error: {
              type: 'invalid_request_error',
              code: `bad_${TOKEN.toUpperCase()}`,
              message: `rejected: ${forms.join(' | ')}`,
              param: base64(TOKEN),
              request_id: `req_${TOKEN.toLowerCase()}`,
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await temp.cleanup();
  });

  it('in any case or base64: redacted from the results and failed files, the log, the review page, stdout and stderr', async () => {
    const file = join(temp.dir, 'clients.csv');
    await writeFile(file, stringify([CLIENT_HEADER, ...validRows(2)]));
    const outputs: string[] = [];
    // 422: rows fail with the server's message recorded; 401: the run stops with it on stderr.
    for (const answer of [422, 401]) {
      status = answer;
      const paths = { results: join(temp.dir, `${answer}.results.csv`), failed: join(temp.dir, `${answer}.failed.csv`), log: join(temp.dir, `${answer}.log`), report: join(temp.dir, `${answer}.html`) };
      const run = await runCliInProcess(
        // --identity none: the rows' own requests meet the answer (the listing before them is below).
        ['import', file, '--results', paths.results, '--failed', paths.failed, '--log-file', paths.log, '--report', paths.report, '--retries', '0', '--json', '--identity', 'none'],
        { env: { CCS_BASE_URL: base, CCS_TOKEN: TOKEN, CCS_SIGNING_KEY_FILE: keyFile } },
      );
      expect(run.code, run.stderr).toBe(answer === 422 ? 1 : 3);
      // The listing of who the service holds meets the same answer first: refused, or stopped, redacted.
      const listing = await runCliInProcess(['import', file, '--results', join(temp.dir, `${answer}.listing.csv`), '--retries', '0'], {
        env: { CCS_BASE_URL: base, CCS_TOKEN: TOKEN, CCS_SIGNING_KEY_FILE: keyFile },
      });
      expect(listing.code, listing.stderr).toBe(answer === 422 ? 2 : 3);
      expect(leaksToken(listing.stderr), `${answer}: the listing's stderr`).toBeUndefined();
      outputs.push(listing.stderr);
      const texts: Record<string, string> = { stdout: run.stdout, stderr: run.stderr };
      for (const [name, path] of Object.entries(paths)) texts[name] = await readFile(path, 'utf8');
      // The server's text did arrive: redacted, not dropped.
      expect(texts.results!).toContain('rejected: [redacted] | [redacted]');
      expect(texts.stderr!).toContain(answer === 422 ? '2 failed' : `cause: the service refused the token or the signature (401 bad_[redacted])`);
      for (const [name, text] of Object.entries(texts)) {
        expect(leaksToken(text), `${answer}: ${name}`).toBeUndefined();
        outputs.push(text);
      }
    }
    expect(outputs.join('\n')).toContain('[redacted]');
  });
});

describe('the redactors', () => {
  it('redactToken: the token in any case, percent- and base64-encoded, alone or inside other encoded text', () => {
    const token = 'tok/9fQ2+xZ=Secret';
    const forms = [
      token,
      token.toUpperCase(),
      encodeURIComponent(token),
      base64(token),
      base64url(token),
      base64(`Bearer ${token}`),
      base64url(`Bearer ${token}`),
      base64(`x${token.toLowerCase()}`),
      base64(`xy${token}xyz`),
    ];
    for (const form of forms) {
      const text = `before ${form} after`;
      expect(leaksToken(redactToken(text, token), token), form).toBeUndefined();
      expect(redactToken(text, token), form).toContain('[redacted]');
      expect(redactToken(text, token), form).not.toContain(form);
    }
    expect(redactToken('nothing secret here', token)).toBe('nothing secret here');
  });

  it('redactSecrets: lk_ tokens in any case, URL credentials up to the last @ of the host part', () => {
    for (const [text, expected] of [
      ['LK_LIVE_ABCDEF123 and lk_Sandbox_x9', 'LK_LIVE_[redacted] and lk_Sandbox_[redacted]'],
      ['proxy http://user:p@ss@proxy:3128/x refused', 'proxy http://[redacted]@proxy:3128/x refused'],
      ['https://token@host/path?mail=a@b', 'https://[redacted]@host/path?mail=a@b'],
      ['no credentials: http://proxy:3128, mail me@example.com', 'no credentials: http://proxy:3128, mail me@example.com'],
    ] as const) {
      expect(redactSecrets(text)).toBe(expected);
    }
  });

  it('a megabyte of `a.a.a.…` from a server is redacted in linear time (an unbounded scheme pattern took minutes)', () => {
    const started = performance.now();
    expect(redactToken('a.'.repeat(500_000), TOKEN)).toHaveLength(1_000_000);
    // Linear: ~0.1 s; the square of a megabyte: ~6 minutes. The bound leaves room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
