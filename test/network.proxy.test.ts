import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bypassesProxy, proxyEnvFrom, proxyFor } from '../src/service/dispatcher.js';
import { CLIENT_HEADER, readResults, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';
import { startProxy, type TestProxy } from './proxy.helpers.js';

// The service over HTTPS, as a real one is: CONNECT tunnels carry TLS end to end.
const ctx = useSandbox({ tls: true });
let proxy: TestProxy;
let locked: TestProxy;
let caFile: string;

/** No proxy variable leaks in from the machine running the tests. */
const CLEAN = {
  HTTPS_PROXY: undefined,
  https_proxy: undefined,
  HTTP_PROXY: undefined,
  http_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
};

beforeAll(async () => {
  proxy = await startProxy();
  locked = await startProxy({ credentials: { user: 'migrator', password: 's3cret-proxy-pw' } });
  caFile = join(ctx.dir, 'ca.pem');
  await writeFile(caFile, ctx.sandbox.tls!.caPem);
});
afterAll(async () => {
  await proxy?.close();
  await locked?.close();
});

let fileCount = 0;
async function input(rows: number): Promise<{ file: string; results: string }> {
  fileCount++;
  const file = join(ctx.dir, `proxy-${fileCount}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, fileCount * 1000)]));
  return { file, results: `${file}.results.csv` };
}

/** The sandbox's CA by CCS_CA_FILE: the CLI runs in this process (test/network.tls.test.ts covers NODE_EXTRA_CA_CERTS). */
function env(extra: Record<string, string | undefined>) {
  return { ...ctx.env(), ...CLEAN, CCS_CA_FILE: caFile, ...extra };
}

const target = () => new URL(ctx.sandbox.url).host;

describe('HTTPS_PROXY / HTTP_PROXY / NO_PROXY', () => {
  it.each(['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'])(
    '%s: every request goes through the proxy, in a CONNECT tunnel to the service',
    async (name) => {
      const { file, results } = await input(5);
      const before = proxy.tunnels.length;
      const run = await runCli(['import', file, '--results', results, '--quiet', '--json'], {
        env: env({ [name]: proxy.url }),
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).counts.created).toBe(5);
      const opened = proxy.tunnels.slice(before);
      expect(opened.length).toBeGreaterThanOrEqual(1);
      expect(new Set(opened)).toEqual(new Set([target()]));
    },
  );

  it.each([
    ['127.0.0.1', true],
    ['localhost,127.0.0.1', true],
    ['*', true],
    ['example.com', false],
  ])('NO_PROXY=%s bypasses the proxy: %s', async (noProxy, bypassed) => {
    const { file, results } = await input(3);
    const before = proxy.tunnels.length;
    const run = await runCli(['import', file, '--results', results, '--quiet'], {
      env: env({ HTTPS_PROXY: proxy.url, NO_PROXY: noProxy }),
    });
    expect(run.code).toBe(0);
    expect(proxy.tunnels.length > before).toBe(!bypassed);
    expect((await readResults(results)).filter((l) => l[1] === 'created')).toHaveLength(3);
  });

  it('export goes through it too', async () => {
    const before = proxy.tunnels.length;
    const run = await runCli(['export', '--format', 'jsonl', '--quiet'], { env: env({ https_proxy: proxy.url }) });
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n').length).toBe(ctx.sandbox.store.size);
    expect(proxy.tunnels.length).toBeGreaterThan(before);
  });
});

describe('--proxy / CCS_PROXY', () => {
  it('--proxy wins over NO_PROXY; credentials in its URL reach the proxy and are never printed', async () => {
    const { file, results } = await input(4);
    const url = `http://migrator:s3cret-proxy-pw@127.0.0.1:${locked.port}`;
    const run = await runCli(['import', file, '--results', results, '--proxy', url, '--json'], {
      env: env({ NO_PROXY: '*' }),
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts.created).toBe(4);
    expect(locked.tunnels.length).toBeGreaterThan(0);
    expect(locked.authorizations.at(-1)).toBe(`Basic ${Buffer.from('migrator:s3cret-proxy-pw').toString('base64')}`);
    expect(run.stdout + run.stderr).not.toContain('s3cret');
  });

  it('CCS_PROXY with wrong credentials: stops at once (exit 2), names the fix, shows no password', async () => {
    const { file, results } = await input(20);
    const run = await runCli(['import', file, '--results', results], {
      env: env({ CCS_PROXY: `http://migrator:wrong-pw@127.0.0.1:${locked.port}` }),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/proxy .* asks for credentials \(407\).*USER:PASSWORD/s);
    expect(run.stderr).not.toContain('wrong-pw');
    const lines = await readResults(results);
    expect(lines.map((l) => l[1])).toEqual(Array(20).fill('not_attempted'));
    expect(lines.map((l) => l.join(',')).join('\n')).not.toContain('wrong-pw');
  });

  it('a proxy that is not there: exit 2 within seconds, rows not_attempted, the fix names --proxy', async () => {
    const gone = await startProxy();
    await gone.close();
    const { file, results } = await input(30);
    const requests = ctx.sandbox.stats.requests;
    const run = await runCli(['import', file, '--results', results, '--proxy', gone.url], { env: env({}) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the proxy http:\/\/127\.0\.0\.1:\d+ cannot be reached \(ECONNREFUSED\).*--proxy/s);
    expect(run.stderr).toMatch(/to continue: ccs-bulk import .* --resume/);
    expect(ctx.sandbox.stats.requests).toBe(requests);
    expect((await readResults(results)).every((l) => l[1] === 'not_attempted')).toBe(true);
  });

  it('refuses a proxy URL that is not http(s), without echoing it', async () => {
    const { file, results } = await input(1);
    const run = await runCli(['import', file, '--results', results, '--proxy', 'socks9://u:pw-123@host:1'], { env: env({}) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--proxy must be an http:\/\/ or https:\/\/ proxy URL/);
    expect(run.stderr).not.toContain('pw-123');
  });
});

describe('proxy selection (pure)', () => {
  it('reads lower case before upper case, as undici does', () => {
    expect(proxyEnvFrom({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:1', NO_PROXY: 'a' })).toEqual({
      httpProxy: undefined,
      httpsProxy: 'http://lower:1',
      noProxy: 'a',
    });
  });

  it.each([
    ['api.example.com', 443, 'example.com', true],
    ['api.example.com', 443, '.example.com', true],
    ['api.example.com', 443, '*.example.com', true],
    ['example.com', 443, 'api.example.com', false],
    ['api.example.com', 443, 'example.com:8443', false],
    ['api.example.com', 8443, 'example.com:8443', true],
    ['notexample.com', 443, 'example.com', false],
    ['10.0.0.1', 443, 'localhost 10.0.0.1', true],
  ])('%s:%i with NO_PROXY=%s bypasses: %s', (host, port, noProxy, expected) => {
    expect(bypassesProxy(host, port, noProxy)).toBe(expected);
  });

  it('an https origin falls back to HTTP_PROXY; credentials are redacted in what is reported', () => {
    const origin = new URL('https://api.example.com');
    expect(proxyFor(origin, { env: { httpProxy: 'http://u:p@proxy:3128' } })).toEqual({
      proxy: 'http://[redacted]@proxy:3128',
      proxySource: 'HTTP_PROXY',
    });
    expect(proxyFor(origin, { env: { httpsProxy: 'http://proxy:1', noProxy: 'example.com' } }).proxy).toBeUndefined();
    expect(proxyFor(origin, { proxy: 'http://proxy:2', env: { noProxy: '*' } }).proxy).toBe('http://proxy:2');
  });
});
