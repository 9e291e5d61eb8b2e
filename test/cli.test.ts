import { spawn } from 'node:child_process';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKey } from '../src/service/keys.js';
import { createSigner, verifySignature } from '../src/service/signing.js';
import { BIN, makeTempDir, runCliInProcess as runCli } from './helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

describe('ccs-bulk --help', () => {
  it('lists every command', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['import <file>', 'validate <file>', 'export', 'sandbox', 'keygen']) {
      expect(run.stdout).toContain(command);
    }
  });

  it('a mistyped command is a usage error (exit 2)', async () => {
    const run = await runCli(['improt', 'x.csv']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Did you mean import|Unknown argument/);
  });
});

describe('README Quick start', () => {
  it('`ccs-bulk import fixtures/clients.csv --sandbox` works with no configuration', async () => {
    const results = join(temp.dir, 'quick.results.csv');
    const run = await runCli(['import', 'fixtures/clients.csv', '--sandbox', '--results', results, '--json']);
    expect(run.code).toBe(1); // the fixture holds invalid rows on purpose
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 290, invalid: 7, duplicate: 3 });
    expect(run.stderr).toContain('in-process sandbox');
  });
});

describe('ccs-bulk keygen', () => {
  it('writes an RSA-4096 pair that loads and verifies, and never overwrites it', async () => {
    const out = join(temp.dir, 'keys');
    const run = await runCli(['keygen', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/fingerprint: SHA256:[A-Za-z0-9+/]{43}/);
    expect(run.stdout).not.toContain('PRIVATE KEY');
    expect((await stat(join(out, 'private.pem'))).mode & 0o777).toBe(0o600);
    const { key, warnings } = await loadSigningKey(join(out, 'private.pem'));
    expect(warnings).toEqual([]);
    const publicKey = createPublicKey(await readFile(join(out, 'public.pem'), 'utf8'));
    const body = Buffer.from('{"name":"x"}');
    for (const scheme of [
      { hash: 'sha256', padding: 'pkcs1' },
      { hash: 'sha512', padding: 'pss' },
    ] as const) {
      const signature = await createSigner(key, scheme).sign(body);
      expect(verifySignature(publicKey, body, signature, scheme)).toBe(true);
      expect(verifySignature(publicKey, Buffer.from('{"name":"y"}'), signature, scheme)).toBe(false);
    }
    const again = await runCli(['keygen', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('never overwrites');
  });

  it('refuses keys the service would refuse or every user can read, and warns about group-readable ones', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const small = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs1',
      format: 'pem',
    });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    await writeFile(join(temp.dir, 'small.pem'), small, { mode: 0o600 });
    await writeFile(join(temp.dir, 'ec.pem'), ec, { mode: 0o600 });
    await writeFile(join(temp.dir, 'junk.pem'), 'not a key', { mode: 0o600 });
    await expect(loadSigningKey(join(temp.dir, 'small.pem'))).rejects.toThrow(
      /RSA-2048; the service accepts only RSA-4096/,
    );
    await expect(loadSigningKey(join(temp.dir, 'ec.pem'))).rejects.toThrow(/ec key/);
    await expect(loadSigningKey(join(temp.dir, 'junk.pem'))).rejects.toThrow(/not a PEM private key/);
    await expect(loadSigningKey(join(temp.dir, 'missing.pem'))).rejects.toThrow(/cannot read signing key/);
    const out = join(temp.dir, 'keys');
    const pem = await readFile(join(out, 'private.pem'), 'utf8');
    await writeFile(join(temp.dir, 'open.pem'), pem);
    await chmod(join(temp.dir, 'open.pem'), 0o644);
    await expect(loadSigningKey(join(temp.dir, 'open.pem'))).rejects.toThrow(/readable by every user \(mode 644\); run: chmod 600/);
    await writeFile(join(temp.dir, 'group.pem'), pem);
    await chmod(join(temp.dir, 'group.pem'), 0o640);
    const { warnings } = await loadSigningKey(join(temp.dir, 'group.pem'));
    expect(warnings[0]).toContain('readable by its group (mode 640); run: chmod 600');
    // PKCS#1 form of the same key loads too.
    const pkcs1 = createPrivateKey(pem).export({ type: 'pkcs1', format: 'pem' });
    await writeFile(join(temp.dir, 'pkcs1.pem'), pkcs1, { mode: 0o600 });
    expect((await loadSigningKey(join(temp.dir, 'pkcs1.pem'))).key.asymmetricKeyDetails?.modulusLength).toBe(
      4096,
    );
  });
});

describe('ccs-bulk sandbox', () => {
  it('serves seeded clients to the printed token and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--seed', '100'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const ready = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (/CCS_TOKEN=/.test(stdout)) resolve();
      });
    });
    await ready;
    const url = /CCS_BASE_URL=(\S+)/.exec(stdout)?.[1];
    const token = /CCS_TOKEN=(\S+)/.exec(stdout)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const list = await fetch(`${url}/v1/clients?size=100`, { headers: { authorization: `Bearer ${token}` } });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { data: { clients: unknown[] } };
    expect(body.data.clients).toHaveLength(100);
    const refused = await fetch(`${url}/v1/clients`);
    expect(refused.status).toBe(401);
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
  });
});
