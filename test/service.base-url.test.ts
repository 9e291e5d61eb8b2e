/**
 * Base URLs: a gateway's path prefix works for import, export and check alike (against the
 * sandbox served under that prefix); the API's own path (`/v1`) is refused with the root to use;
 * and no string at all, as --base-url or CCS_BASE_URL, reaches an internal error.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../src/cli/cli.js';
import { isCcsError, UsageError } from '../src/errors.js';
import { resolveConnection } from '../src/config/options.js';
import { createServiceClient } from '../src/service/client.js';
import { checkBaseUrl, parseBaseUrl } from '../src/service/url.js';
import { CLIENT_HEADER, cliEnv, readResults, runCli, useSandbox, validRows } from './helpers.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

/** Strings shaped like base URLs, and broken ones: schemes, hosts, ports, prefixes, /v1, junk. */
const baseUrlText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc
    .tuple(
      fc.constantFrom('https://', 'http://', 'HTTPS://', 'ftp://', 'https:', 'https:/', '', '//', 'http://user:pw@'),
      fc.constantFrom('ccs.example.com', '127.0.0.1', 'localhost', '[::1]', '[fe80::1', 'xn--bcher-kva.example', 'ex ample.com', '', '10.0.0.1', 'münchen.de'),
      fc.constantFrom('', ':0', ':443', ':4010', ':65536', ':-1', ':abc'),
      fc.array(fc.constantFrom('ccs', 'v1', 'V1', 'clients', 'client', 'api', '', '..', '.', '%2F', 'a b', 'é', '\t', '\n', '?', '#x', 'v2', '%zz'), { maxLength: 4 }),
      fc.constantFrom('', '/', '//', '?x=1', '#top', ' ', '\u0000'),
    )
    .map(([scheme, host, port, segments, tail]) => `${scheme}${host}${port}${segments.map((segment) => `/${segment}`).join('')}${tail}`),
);

const REFUSALS = ['bad_base_url', 'insecure_base_url'];

describe('parseBaseUrl', () => {
  it.each([
    ['https://ccs.example.com', 'https://ccs.example.com', ''],
    ['https://ccs.example.com/', 'https://ccs.example.com', ''],
    ['  https://gw.example.com/ccs/  ', 'https://gw.example.com/ccs', '/ccs'],
    ['https://gw.example.com:8443/api/ccs', 'https://gw.example.com:8443/api/ccs', '/api/ccs'],
    ['HTTPS://GW.Example.COM/Ccs', 'https://gw.example.com/Ccs', '/Ccs'],
    ['http://127.0.0.1:4010/v1/ccs', 'http://127.0.0.1:4010/v1/ccs', '/v1/ccs'],
    ['http://[::1]:4010', 'http://[::1]:4010', ''],
  ])('%j → %s (prefix %j)', (input, text, prefix) => {
    expect(parseBaseUrl(input)).toMatchObject({ text, prefix });
  });

  it.each([
    ['https://ccs.example.com/v1', /ends in the API's path.*give the service's root, https:\/\/ccs\.example\.com \(/],
    ['https://ccs.example.com/v1/', /give the service's root, https:\/\/ccs\.example\.com \(/],
    ['https://gw.example.com/ccs/v1/clients', /give the service's root, https:\/\/gw\.example\.com\/ccs \(/],
    ['http://127.0.0.1:9/V1/client', /give the service's root, http:\/\/127\.0\.0\.1:9 \(/],
    ['https://ccs.example.com/ccs?env=live', /must not carry a query/],
    ['https://ccs.example.com/#x', /must not carry a query \(\?…\) or fragment/],
    ['https://ccs.exa mple.com', /holds spaces or control characters/],
    ['ccs.example.com', /is not a URL/],
    ['https://user:secret@ccs.example.com', /must not carry credentials/],
    ['ftp://ccs.example.com', /must be https:\/\//],
    ['http://ccs.example.com', /refusing plain http:\/\//],
  ])('%j is refused: %s', (input, message) => {
    expect(() => parseBaseUrl(input)).toThrow(message);
  });

  it('never echoes credentials', () => {
    expect(() => parseBaseUrl('https://user:secret@ccs.exa mple.com')).toThrow(/\[redacted\]@/);
    try {
      parseBaseUrl('https://user:secret@ccs.exa mple.com');
    } catch (error) {
      expect((error as Error).message).not.toContain('secret');
    }
  });

  it(`any string is a base URL a client can be made for, or a UsageError (${RUNS} strings)`, () => {
    fc.assert(
      fc.property(baseUrlText, (text) => {
        let base: ReturnType<typeof parseBaseUrl>;
        try {
          base = parseBaseUrl(text);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          expect(REFUSALS).toContain((error as UsageError).code);
          return;
        }
        // Accepted: one spelling that parses back to itself, and a client builds on it.
        expect(parseBaseUrl(base.text)).toEqual(base);
        expect(checkBaseUrl(base.text).origin).toBe(base.origin);
        expect(`${base.prefix}/v1/client`).toMatch(/^\/[\u0021-\u00ff]*$/);
        void createServiceClient({ baseUrl: text, token: 'lk_sandbox_x', breaker: false }).close();
      }),
      { numRuns: RUNS },
    );
  });

  it(`CCS_BASE_URL and --base-url: a connection or a UsageError, never another error (${RUNS} strings)`, async () => {
    await fc.assert(
      fc.asyncProperty(baseUrlText, fc.boolean(), async (text, asFlag) => {
        const env = { CCS_TOKEN: 'lk_sandbox_x', ...(!asFlag && { CCS_BASE_URL: text }) };
        const argv = asFlag ? { baseUrl: text } : {};
        try {
          const connection = await resolveConnection(argv, env, undefined);
          expect(connection.kind).toBe('service');
        } catch (error) {
          expect(isCcsError(error), String(error)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('a sandbox served under a path prefix', () => {
  const context = useSandbox({ basePath: '/ccs/' });
  const csv = () => [CLIENT_HEADER, ...validRows(3)].map((row) => row.map((cell) => `"${cell}"`).join(',')).join('\n');

  it('hands out its URL with the prefix, and answers 404 outside it', async () => {
    expect(context.sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ccs$/);
    const origin = new URL(context.sandbox.url).origin;
    const outside = await fetch(`${origin}/v1/clients`, { headers: { authorization: `Bearer ${context.sandbox.token}` } });
    expect(outside.status).toBe(404);
    expect(((await outside.json()) as { error: { message: string } }).error.message).toContain('served under /ccs');
  });

  it('import, export and check all go to PREFIX/v1/…', async () => {
    const file = join(context.dir, 'prefixed.csv');
    await writeFile(file, csv());
    const stderr = new PassThrough();
    const stdout = new PassThrough();
    const io = { stdout, stderr };
    const env = cliEnv(context.env());
    const imported = await runCliInProcess(['import', file, '--quiet'], env, io);
    expect(imported).toBe(0);
    expect((await readResults(`${file}.results.csv`)).map((row) => row[1])).toEqual(['created', 'created', 'created']);

    const out = join(context.dir, 'prefixed-export.csv');
    expect(await runCliInProcess(['export', '--out', out, '--quiet'], env, io)).toBe(0);
    expect((await readFile(out, 'utf8')).split('\n').filter((line) => line.includes('@example.com'))).toHaveLength(3);

    let printed = '';
    stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    expect(await runCliInProcess(['check', '--base-url', `${context.sandbox.url}/`], cliEnv({ ...context.env(), CCS_BASE_URL: undefined }), io)).toBe(0);
    expect(printed).toContain(`ccs-bulk check: ${context.sandbox.url}\n`);
    expect(printed).toMatch(new RegExp(`warning +base URL +${context.sandbox.url.replace(/[.:/]/g, '\\$&')} \\(plain HTTP`));
    expect(printed).toMatch(/ok +token +accepted/);
    expect(printed).toMatch(/ok +signature/);
  });

  it('the real CLI: /v1 and broken base URLs are exit 2 with the code, never an internal error', async () => {
    const file = join(context.dir, 'refused.csv');
    await writeFile(file, csv());
    const cases: [string[], Record<string, string>, string][] = [
      [['import', file, '--base-url', `${context.sandbox.url}/v1`], {}, 'bad_base_url'],
      [['export', '--out', '-'], { CCS_BASE_URL: `${context.sandbox.url}/v1/clients` }, 'bad_base_url'],
      [['check'], { CCS_BASE_URL: 'https://[::1' }, 'bad_base_url'],
      [['import', file], { CCS_BASE_URL: 'https://gw.example.com/ccs?x=1' }, 'bad_base_url'],
      [['import', file], { CCS_BASE_URL: '\u0007https://gw.example.com' }, 'bad_base_url'],
      [['check'], { CCS_BASE_URL: 'http://gw.example.com/ccs' }, 'insecure_base_url'],
      [['import', file], { CCS_BASE_URL: '  ' }, 'base_url_missing'],
    ];
    for (const [args, env, code] of cases) {
      const run = await runCli(args, { env: { ...context.env(), ...env } });
      expect(run.stderr, args.join(' ')).not.toContain('internal error');
      expect(run.code, `${args.join(' ')} ${JSON.stringify(env)}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`[${code}]`);
    }
    // And with the prefix, the real binary imports: the whole chain, child process and all.
    const ok = await runCli(['import', file, '--quiet', '--overwrite'], { env: context.env() });
    expect(ok.code, ok.stderr).toBe(0);
  });
});
