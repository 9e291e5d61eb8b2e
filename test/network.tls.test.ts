import { rootCertificates } from 'node:tls';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { trustedCas } from '../src/service/dispatcher.js';
import { CLIENT_HEADER, makeTempDir, readResults, runCli, runCliInProcess, sandboxEnv, useSandbox, validRows, writeKeyFile, startTestSandbox } from './helpers.js';

const ctx = useSandbox({ tls: true, seed: 30 });
let caFile: string;
let otherCaFile: string;
let other: Sandbox;

// NODE_EXTRA_CA_CERTS is read when a process starts: the two tests about it run the real command;
// the rest run in this process, given the CA by --ca-file or CCS_CA_FILE.
const CLEAN = { HTTPS_PROXY: undefined, https_proxy: undefined, HTTP_PROXY: undefined, http_proxy: undefined };

beforeAll(async () => {
  caFile = join(ctx.dir, 'ca.pem');
  await writeFile(caFile, ctx.sandbox.tls!.caPem);
  // Another run's CA: a real CA, just not the one that signed this service's certificate.
  other = await startSandbox({ tls: true, verifySignatures: false });
  otherCaFile = join(ctx.dir, 'other-ca.pem');
  await writeFile(otherCaFile, other.tls!.caPem);
});
afterAll(() => other?.close());

let fileCount = 0;
async function input(rows: number): Promise<{ file: string; results: string }> {
  fileCount++;
  const file = join(ctx.dir, `tls-${fileCount}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, 50_000 + fileCount * 1000)]));
  return { file, results: `${file}.results.csv` };
}
const env = (extra: Record<string, string | undefined> = {}) => ({ ...ctx.env(), ...CLEAN, ...extra });

describe('HTTPS sandbox', () => {
  it('serves https:// with a CA made for the run', () => {
    expect(ctx.sandbox.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(ctx.sandbox.tls?.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('NODE_EXTRA_CA_CERTS: import and export run over TLS', async () => {
    const { file, results } = await input(12);
    const run = await runCli(['import', file, '--results', results, '--quiet', '--json'], {
      env: env({ NODE_EXTRA_CA_CERTS: caFile }),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts.created).toBe(12);
    const exported = await runCli(['export', '--format', 'jsonl', '--quiet'], { env: env({ NODE_EXTRA_CA_CERTS: caFile }) });
    expect(exported.code).toBe(0);
    expect(exported.stdout.trim().split('\n')).toHaveLength(ctx.sandbox.store.size);
  });

  it.each([
    ['--ca-file', (file: string) => ({ args: ['--ca-file', file], env: {} })],
    ['CCS_CA_FILE', (file: string) => ({ args: [], env: { CCS_CA_FILE: file } })],
  ])('%s adds the CA', async (_name, how) => {
    const { file, results } = await input(5);
    const given = how(caFile);
    const run = await runCliInProcess(['import', file, '--results', results, '--quiet', ...given.args], { env: env(given.env) });
    expect(run.code).toBe(0);
    expect((await readResults(results)).every((l) => l[1] === 'created')).toBe(true);
  });

  it("--ca-file adds to Node's roots and keeps NODE_EXTRA_CA_CERTS", async () => {
    expect(trustedCas('X')).toEqual([...rootCertificates, 'X']);
    const { file, results } = await input(3);
    // The service's CA comes from NODE_EXTRA_CA_CERTS, an unrelated one from --ca-file.
    const run = await runCli(['import', file, '--results', results, '--quiet', '--ca-file', otherCaFile], {
      env: env({ NODE_EXTRA_CA_CERTS: caFile }),
    });
    expect(run.code).toBe(0);
  });
});

describe('an untrusted certificate stops the run at once', () => {
  it.each([
    ['no extra CA', [] as string[]],
    ["another CA's bundle", ['--ca-file', 'OTHER']],
  ])('import, %s: exit 2, nothing sent, every row not_attempted, the fix named', async (_name, extra) => {
    const { file, results } = await input(50);
    const requests = ctx.sandbox.stats.requests;
    const args = extra.map((a) => (a === 'OTHER' ? otherCaFile : a));
    const run = await runCliInProcess(['import', file, '--results', results, ...args], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/certificate of 127\.0\.0\.1:\d+ is not trusted \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\).*--ca-file.*NODE_EXTRA_CA_CERTS/s);
    expect(run.stderr).toMatch(/0 created, 0 failed.*50 not attempted/);
    expect(ctx.sandbox.stats.requests).toBe(requests);
    const lines = await readResults(results);
    expect(lines).toHaveLength(50);
    expect(lines.every((l) => l[1] === 'not_attempted')).toBe(true);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 (a CI runner set so machine-wide) turns nothing off: said, ignored, nothing sent', async () => {
    const { file, results } = await input(5);
    const requests = ctx.sandbox.stats.requests;
    // A process of its own: Node reads the variable from the process environment at each connection.
    const offEnv = env({ NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    const run = await runCli(['import', file, '--results', results], { env: offEnv });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('warning: NODE_TLS_REJECT_UNAUTHORIZED=0 is set in the environment: ignored, ccs-bulk always verifies');
    expect(run.stderr).toMatch(/certificate of 127\.0\.0\.1:\d+ is not trusted/);
    const exported = await runCli(['export', '--out', join(ctx.dir, 'off.csv')], { env: offEnv });
    expect(exported.code).toBe(2);
    expect(exported.stderr).toMatch(/not trusted/);
    // The token never reached the server: no request got past the handshake.
    expect(ctx.sandbox.stats.requests).toBe(requests);
  });

  it('export: exit 2 with the same message, no output file', async () => {
    const out = join(ctx.dir, 'never.csv');
    const run = await runCliInProcess(['export', '--out', out], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/not trusted.*--ca-file/);
    expect(run.stderr).toMatch(/never\.csv was not written/);
  });

  it('a CA file that is not PEM is refused before connecting', async () => {
    const bad = join(ctx.dir, 'bad-ca.pem');
    await writeFile(bad, 'not a certificate');
    const { file, results } = await input(1);
    const run = await runCliInProcess(['import', file, '--results', results, '--ca-file', bad], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--ca-file .*bad-ca\.pem holds no PEM certificate/);
  });
});

describe('mutual TLS', () => {
  let mtls: Sandbox;
  let dir: { dir: string; cleanup(): Promise<void> };
  let files: { ca: string; cert: string; key: string; signing: string };
  beforeAll(async () => {
    mtls = await startTestSandbox({ tls: { clientCertificate: true } });
    dir = await makeTempDir();
    files = {
      ca: join(dir.dir, 'ca.pem'),
      cert: join(dir.dir, 'client.pem'),
      key: join(dir.dir, 'client-key.pem'),
      signing: await writeKeyFile(dir.dir, mtls.privateKeyPem),
    };
    await writeFile(files.ca, mtls.tls!.caPem);
    await writeFile(files.cert, mtls.tls!.clientCertPem!);
    await writeFile(files.key, mtls.tls!.clientKeyPem!, { mode: 0o600 });
  });
  afterAll(async () => {
    await mtls?.close();
    await dir?.cleanup();
  });
  const mtlsEnv = (extra: Record<string, string> = {}) => ({ ...sandboxEnv(mtls, files.signing), ...CLEAN, CCS_CA_FILE: files.ca, ...extra });

  it('--client-cert/--client-key: the service that requires one accepts the run', async () => {
    const { file, results } = await input(4);
    const run = await runCliInProcess(['import', file, '--results', results, '--quiet', '--client-cert', files.cert, '--client-key', files.key], {
      env: mtlsEnv(),
    });
    expect(run.code).toBe(0);
    expect(mtls.store.size).toBe(4);
  });

  it('CCS_CLIENT_CERT_FILE / CCS_CLIENT_KEY_FILE: export works too', async () => {
    const run = await runCliInProcess(['export', '--format', 'jsonl', '--quiet'], { env: mtlsEnv({ CCS_CLIENT_CERT_FILE: files.cert, CCS_CLIENT_KEY_FILE: files.key }) });
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(mtls.store.size);
  });

  it('without a client certificate: exit 2, the fix names --client-cert', async () => {
    const { file, results } = await input(6);
    const run = await runCliInProcess(['import', file, '--results', results], { env: mtlsEnv() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/never answered.*client certificate.*--client-cert, --client-key/s);
    expect((await readResults(results)).every((l) => l[1] === 'not_attempted')).toBe(true);
  });

  it('a key that is not the certificate\'s is refused before connecting, and never printed', async () => {
    const { file, results } = await input(1);
    const run = await runCliInProcess(['import', file, '--results', results, '--client-cert', files.cert, '--client-key', files.signing], {
      env: mtlsEnv(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--client-key .*private\.pem does not belong to --client-cert/);
    expect(run.stderr).not.toMatch(/PRIVATE KEY/);
  });

  it('a sandbox given another CA for client certificates (--tls-client-ca) accepts that CA\'s clients', async () => {
    const trusting = await startSandbox({ tls: { clientCaPem: mtls.tls!.caPem }, verifySignatures: false, seed: 2 });
    try {
      expect(trusting.tls?.requiresClientCertificate).toBe(true);
      const ca = join(dir.dir, 'trusting-ca.pem');
      await writeFile(ca, trusting.tls!.caPem);
      const environment = { CCS_BASE_URL: trusting.url, CCS_TOKEN: trusting.token, ...CLEAN, CCS_CA_FILE: ca };
      const accepted = await runCliInProcess(['export', '--format', 'jsonl', '--quiet', '--client-cert', files.cert, '--client-key', files.key], { env: environment });
      expect(accepted.code).toBe(0);
      expect(accepted.stdout.trim().split('\n')).toHaveLength(2);
      const refused = await runCliInProcess(['export', '--quiet'], { env: environment });
      expect(refused.code).toBe(2);
    } finally {
      await trusting.close();
    }
  });

  it('a certificate without its key is a usage error', async () => {
    const { file, results } = await input(1);
    const run = await runCliInProcess(['import', file, '--results', results, '--client-cert', files.cert], { env: mtlsEnv() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/needs both --client-cert and --client-key/);
  });
});
