/**
 * A base URL whose path is wrong: the service sits behind a gateway under /ccs and --base-url
 * leaves the prefix out (or the other way round). Every request answers 404/405, so import,
 * export and check stop at once with the URL they called and the fix (exit 2,
 * `endpoint_not_found`) instead of failing the file row by row; the rows stay unsent, and the
 * right base URL continues the same results file.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { createPrivateKey } from 'node:crypto';
import { createPathVerdict } from '../src/check/create-path.js';
import { ConnectionError } from '../src/errors.js';
import { importClients, isImportStop } from '../src/import/run-import.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { CLI_WORDS } from '../src/check/words.js';
import { cli } from './cli-in-process.js';
import { CLIENT_HEADER, readResults, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox({ basePath: '/ccs' });

/** The sandbox's origin without its prefix: the wrong base URL. */
const wrong = () => new URL(ctx.sandbox.url).origin;
const env = (baseUrl: string) => ({ ...ctx.env(), CCS_BASE_URL: baseUrl });
const creates = () => ctx.sandbox.stats.byStatus[404] ?? 0;

let files = 0;
async function input(rows: number): Promise<string> {
  const file = join(ctx.dir, `wrong-path-${++files}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, 1000 * files)]));
  return file;
}

const outcomes = async (results: string) => (await readResults(results)).map((line) => line[1]);

describe('import against a base URL without the gateway prefix', () => {
  it('stops after the first 20 creates answer 404: exit 2, nothing failed, the URL and the fix; the right base URL continues it', async () => {
    const file = await input(300);
    const before = creates();
    const size = ctx.sandbox.store.size;
    // --identity none: no List Clients first, so the creates are what meets the wrong path.
    const run = await cli(['import', file, '--identity', 'none', '--concurrency', '4', '--json'], env(wrong()));
    expect(run.code).toBe(2);
    const summary = JSON.parse(run.stdout);
    expect(summary.stopped).toMatchObject({ reason: 'connection', code: 'endpoint_not_found' });
    expect(summary.stopped.cause).toContain(`POST ${wrong()}/v1/client answered 404 to all of the first 20 creates`);
    expect(summary.stopped.cause).toMatch(/route_not_found.*Create Client is not at this base URL; no client was created/);
    expect(summary.stopped.fix).toMatch(/^--base-url \(CCS_BASE_URL\) is the service's root, the part before \/v1.*ccs-bulk check/);
    expect(summary.counts).toMatchObject({ created: 0, failed: 0, not_attempted: 300 });
    // 20, and what was on the wire when the 20th came back: not the file.
    expect(creates() - before).toBeGreaterThanOrEqual(20);
    expect(creates() - before).toBeLessThan(20 + 8);
    expect(ctx.sandbox.store.size).toBe(size);
    const lines = await readResults(`${file}.results.csv`);
    expect(lines.every((line) => line[1] === 'not_attempted')).toBe(true);
    expect(lines.filter((line) => line[7] === 'endpoint_not_found').length).toBe(creates() - before);

    const resumed = await cli(['import', file, '--identity', 'none', '--resume', '--json'], env(ctx.sandbox.url));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).counts).toMatchObject({ created: 300, failed: 0, not_attempted: 0 });
    expect(ctx.sandbox.store.size).toBe(size + 300);
    expect(new Set(await outcomes(`${file}.results.csv`))).toEqual(new Set(['created']));
  });

  it('a file of fewer than 20 rows, every create 404: stops the same way at the end, no row failed', async () => {
    const file = await input(5);
    const run = await cli(['import', file, '--identity', 'none', '--json'], env(wrong()));
    expect(run.code).toBe(2);
    const summary = JSON.parse(run.stdout);
    expect(summary.stopped.code).toBe('endpoint_not_found');
    expect(summary.stopped.cause).toContain(`POST ${wrong()}/v1/client answered 404 to all of the first 5 creates`);
    expect(summary.counts).toMatchObject({ created: 0, failed: 0, not_attempted: 5 });
  });

  it('the printed stop: cause, fix and the command that continues', async () => {
    const file = await input(30);
    const run = await cli(['import', file, '--identity', 'none'], env(wrong()));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Stopped after .*: 0 created, 0 failed, .*30 not attempted/);
    expect(run.stderr).toContain(`  cause: POST ${wrong()}/v1/client answered 404 to all of the first 20 creates`);
    expect(run.stderr).toMatch(/ {2}fix: --base-url \(CCS_BASE_URL\) is the service's root/);
    expect(run.stderr).toMatch(/to continue: ccs-bulk import .* --resume/);
    expect(run.stderr).not.toContain('top errors');
  });

  it('by e-mail (the default), the List Clients before the first row meets it first: the same stop, nothing sent', async () => {
    const file = await input(3);
    const size = ctx.sandbox.store.size;
    const run = await cli(['import', file, '--json'], env(wrong()));
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout).stopped).toMatchObject({ code: 'endpoint_not_found', cause: expect.stringContaining(`GET ${wrong()}/v1/clients answered 404`) });
    expect(JSON.parse(run.stdout).stopped.cause).toMatch(/List Clients is not at this base URL$/);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 0, failed: 0, not_attempted: 3 });
    expect(ctx.sandbox.store.size).toBe(size);
  });

  it('a prefix too many (/ccs/api): the same', async () => {
    const file = await input(3);
    const run = await cli(['import', file, '--identity', 'none', '--json'], env(`${ctx.sandbox.url}/api`));
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout).stopped.cause).toContain(`POST ${ctx.sandbox.url}/api/v1/client answered 404 to all of the first 3 creates`);
  });
});

describe('importClients against the wrong base URL', () => {
  it('rejects with ConnectionError endpoint_not_found, in the library\'s words, the rows unsent', async () => {
    const file = await input(25);
    const signer = createSigner(createPrivateKey(ctx.sandbox.privateKeyPem!));
    const service = createServiceClient({ baseUrl: wrong(), token: ctx.sandbox.token, signer });
    try {
      const error = await importClients({ file, service, identity: { by: 'none' }, concurrency: 2 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ code: 'endpoint_not_found', exitCode: 2 });
      expect((error as Error).message).toContain("createServiceClient's baseUrl is the service's root");
      expect((error as Error).message).toContain('checkSetup() tells a wrong path from a refusal');
      expect((error as Error).message).not.toMatch(/--[a-z]/);
      expect(isImportStop(error) && error.summary.counts).toMatchObject({ created: 0, failed: 0, not_attempted: 25 });
    } finally {
      await service.close();
    }
  });
});

describe('export against the wrong base URL', () => {
  it('the first page answers 404: exit 2 naming the URL and the fix, nothing written; the right one exports', async () => {
    const out = join(ctx.dir, 'wrong-path-export.csv');
    const run = await cli(['export', '--out', out, '--quiet'], env(wrong()));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`GET ${wrong()}/v1/clients answered 404 (invalid_request_error route_not_found:`);
    expect(run.stderr).toMatch(/List Clients is not at this base URL: --base-url \(CCS_BASE_URL\) is the service's root.*\[endpoint_not_found\]/);
    expect(run.stderr).toMatch(/was not written/);
    expect((await cli(['export', '--out', out, '--quiet'], env(ctx.sandbox.url))).code).toBe(0);
  });
});

describe('check tells a missing route from a refusal', () => {
  const check = async (baseUrl: string) => {
    const run = await cli(['check', '--json'], { ...env(baseUrl) });
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: { name: string; status: string; detail: string; fix?: string }[] };
    return { run, line: (name: string) => report.checks.find((l) => l.name === name)! };
  };

  it('the wrong path: List Clients and Create Client both not there, with the URLs called and the fix; exit 1', async () => {
    const size = ctx.sandbox.store.size;
    const { run, line } = await check(wrong());
    expect(run.code).toBe(1);
    expect(line('token')).toMatchObject({ status: 'failed', detail: expect.stringContaining(`GET ${wrong()}/v1/clients?size=1 answered 404 route_not_found`) });
    expect(line('create path')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^POST http:\S+\/v1\/client answered 404 route_not_found: .*Create Client is not at this base URL$/) });
    expect(line('create path').fix).toMatch(/^set --base-url \(CCS_BASE_URL\) to the service's root/);
    expect(ctx.sandbox.store.size).toBe(size);
  });

  it('the right path: the unsigned, empty create is refused (401), which proves the route; exit 0, nothing created', async () => {
    const size = ctx.sandbox.store.size;
    const { run, line } = await check(ctx.sandbox.url);
    expect(run.code, run.stdout).toBe(0);
    expect(line('create path')).toMatchObject({ status: 'ok', detail: `POST ${ctx.sandbox.url}/v1/client is there: an unsigned, empty request was refused (401 signature_missing: Create Client requires an X-Signature header: base64 of an RSA-4096 signature over the exact request body bytes.)` });
    expect(ctx.sandbox.store.size).toBe(size);
  });

  const answer = (status: number, extra: { code?: string; location?: string } = {}) => ({
    status,
    date: undefined,
    json: extra.code === undefined ? undefined : { error: { code: extra.code, message: 'm' } },
    at: 0,
    took: 1,
    ...(extra.location !== undefined && { location: extra.location }),
  });
  it.each<[string, ReturnType<typeof answer>, string, RegExp]>([
    ['404 from a gateway', answer(404), 'failed', /answered 404: the service's Create Client is not at this base URL/],
    ['405: the path is a GET elsewhere', answer(405, { code: 'method_not_allowed' }), 'failed', /answered 405 method_not_allowed: m: .*not at this base URL/],
    ['400: fields refused', answer(400, { code: 'parameter_missing' }), 'ok', /is there: an unsigned, empty request was refused \(400 parameter_missing: m\)/],
    ['422: fields refused', answer(422), 'ok', /is there/],
    ['403: refused', answer(403), 'ok', /is there/],
    ['302 to a login page', answer(302, { location: 'https://sso.example.com/login' }), 'failed', /a redirect to https:\/\/sso\.example\.com\/login \(302\): something other than the service/],
    ['200: accepted an empty body', answer(200), 'failed', /accepted an unsigned, empty request \(200\)/],
    ['503', answer(503), 'warning', /answered 503/],
  ])('%s → %s', (_name, given, status, detail) => {
    const line = createPathVerdict(given, 'POST https://gw.example.com/v1/client', CLI_WORDS);
    expect(line.status).toBe(status);
    expect(line.detail).toMatch(detail);
  });
});
