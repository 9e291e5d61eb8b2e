import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSandbox } from '../src/commands/sandbox.js';
import { UsageError } from '../src/errors.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { shellAssignments } from './helpers.js';
import { capture, waitFor } from './stream.helpers.js';

/** A throwaway RSA-4096 public key (its private half was discarded): generating one costs seconds. */
const PUBLIC_KEY_4096 = `-----BEGIN PUBLIC KEY-----
MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEA2wzVKNv9jPOXChSd0GFH
cjIKfCvI4bouHCTwyfo8ok8ylN/G9rV85X7eOOsVokQTrgDxlBIKORvWQ+mNlQrA
QwZiqozdT91pf01i6MfEHnG0njzLH45oPUBoQYjT1/8udhUd4eANbW6TrBR6EhlK
jrWbs2/BQFWHio+w/Ms7YBBX5bcGx9f4r6THkh/FtA0kIm1jo1zginVxaub9jJCi
N+E1kMdcxZZV9qrPsARVVUmhcfWTDx8amNhyaCU88s20sIHNsRUVsjNhkyS+6lVQ
SdJYGQSYlDQRgWADOGNny9o0K1SLndmCxcdfRgTLWEBwC/mcV87/gOjaQemeBgJg
sa86SQmVImlVoLyBUOMM+Db9LHWCPs2U2OQaFCiDZGvPtjb1/32Zzde/N9ps29KM
ttV/K/Z0vQYG/Fb4AVvakfTheOzrCRoaz5zBUSq4do2Vzo8FV4KxqbBa9OTGRMGT
noIK87YALz8O3Ui26FkCxvZ6WvBe2A7D2SjHwebQgkqn6vxAZ0eJU6fCLyi3O5O3
Ooj/t891xEBv8zFa4Z9GmTjncIjtv34cmddRWgUpMx/B/QB1xn1jOyiIB/W36UBl
jzjurZ8D0XcQydgeecd0MtN+B4J+hHMykI1lMa0EikBKISl/2gAhKGS3r4lTAWvC
BGXzZTZYdSjqqgcOExw9vnsCAwEAAQ==
-----END PUBLIC KEY-----
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccs-sandbox-test-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('ccs-bulk sandbox', () => {
  it('prints URL, token, key path and an export line, serves until aborted, then cleans up', async () => {
    const out = capture();
    const err = capture();
    const stop = new AbortController();
    const running = runSandbox(
      { port: 0, seed: 5 },
      { stdout: out.stream, stderr: err.stream, signal: stop.signal },
    );
    await waitFor(() => out.text().includes('Press Ctrl-C'));
    const text = out.text();
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    const token = /token:\s+(lk_sandbox_[0-9a-f]{32})/.exec(text)?.[1];
    const keyPath = shellAssignments(text).CCS_SIGNING_KEY_FILE;
    expect(url && token && keyPath).toBeTruthy();
    expect(text).toContain(`export CCS_BASE_URL=${url} CCS_TOKEN=${token} CCS_SIGNING_KEY_FILE=${shellQuote(keyPath!)}`);
    expect(text).toContain('curl -s -H "Authorization: Bearer $CCS_TOKEN" "$CCS_BASE_URL/v1/clients');
    expect(text).not.toContain('PRIVATE KEY');
    expect((await stat(keyPath!)).mode & 0o777).toBe(0o600);
    expect(await readFile(keyPath!, 'utf8')).toContain('BEGIN PRIVATE KEY');

    const response = await request(`${url}/v1/clients`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.body.json()) as { data: { clients: unknown[] } };
    expect(body.data.clients).toHaveLength(5);

    stop.abort();
    await running;
    expect(existsSync(keyPath!)).toBe(false);
    expect(err.text()).toContain('sandbox stopped: 1 requests');
    await expect(request(`${url}/v1/clients`)).rejects.toThrow();
  });

  it('uses a given public key file and token, and says which private key to sign with', async () => {
    const file = join(dir, 'public.pem');
    await writeFile(file, PUBLIC_KEY_4096);
    const out = capture();
    const stop = new AbortController();
    const running = runSandbox(
      { port: 0, token: 'lk_sandbox_fixed', publicKeyFile: file, signature: { hash: 'sha512', padding: 'pkcs1' }, pageBase: 1 },
      { stdout: out.stream, stderr: new PassThrough(), signal: stop.signal },
    );
    await waitFor(() => out.text().includes('Press Ctrl-C'));
    expect(out.text()).toContain('CCS_TOKEN=lk_sandbox_fixed');
    expect(out.text()).toContain(`the private key matching ${file}`);
    expect(out.text()).toContain('sha512/pkcs1');
    expect(out.text()).not.toContain('CCS_SIGNING_KEY_FILE=');
    stop.abort();
    await running;
  });

  it('refuses a missing or unusable public key file with a UsageError naming it', async () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough() };
    const missing = join(dir, 'missing.pem');
    await expect(runSandbox({ port: 0, publicKeyFile: missing }, io)).rejects.toThrow(UsageError);
    const garbage = join(dir, 'garbage.pem');
    await writeFile(garbage, 'hello');
    const error = await runSandbox({ port: 0, publicKeyFile: garbage }, io).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain(garbage);
  });

  it('refuses a port in use with a UsageError', async () => {
    const out = capture();
    const stop = new AbortController();
    const io = { stdout: out.stream, stderr: new PassThrough(), signal: stop.signal };
    const first = runSandbox({ port: 0, verifySignatures: false }, io);
    await waitFor(() => out.text().includes('Press Ctrl-C'));
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(out.text())?.[1]);
    await expect(runSandbox({ port, verifySignatures: false }, io)).rejects.toThrow(/another --port/);
    stop.abort();
    await first;
  });
});
