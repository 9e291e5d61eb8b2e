/**
 * checkSetup: the `check` command's preflight from code. The same checks, returned as data
 * (nothing printed, nothing created), each failure with a fix in the library's words.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckLine, type CheckName, type CheckReport, checkSetup, type CheckSetupOptions, UsageError } from '../src/index.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { otherKeyPair, useSandbox } from './helpers.js';

// An HTTPS sandbox: every check of a real service runs, TLS included.
const ctx = useSandbox({ tls: true, seed: 5 });

const options = (extra: Partial<CheckSetupOptions> = {}): CheckSetupOptions => ({
  baseUrl: ctx.sandbox.url,
  token: ctx.sandbox.token,
  signingKeyFile: ctx.keyFile,
  network: { tls: { ca: ctx.sandbox.tls!.caPem } },
  ...extra,
});
const line = (report: CheckReport, name: CheckName): CheckLine => {
  const found = report.checks.find((check) => check.name === name);
  if (!found) throw new Error(`no ${name} check in ${JSON.stringify(report.checks.map((check) => check.name))}`);
  return found;
};
const statuses = (report: CheckReport) => Object.fromEntries(report.checks.map((check) => [check.name, check.status]));

/** What the process wrote to stdout and stderr while `run` ran. */
async function written<T>(run: () => Promise<T>): Promise<{ value: T; output: string }> {
  const [out, err] = [process.stdout.write, process.stderr.write];
  let output = '';
  const capture = (chunk: string | Uint8Array) => {
    output += String(chunk);
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  try {
    return { value: await run(), output };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

describe('checkSetup against the HTTPS sandbox', () => {
  it('a good setup: ok, every check named and holding, in order; nothing printed, nothing created', async () => {
    const size = ctx.sandbox.store.size;
    const { value: report, output } = await written(() => checkSetup(options()));
    expect(output).toBe('');
    expect(ctx.sandbox.store.size).toBe(size);
    expect(report.ok).toBe(true);
    expect(report.baseUrl).toBe(ctx.sandbox.url);
    expect(report.checks.map((check) => check.name)).toEqual([
      'base URL', 'proxy', 'DNS', 'TCP', 'TLS', 'token', 'create path', 'page base', 'clock', 'signing key', 'signature',
    ]);
    expect(report.checks.filter((check) => check.status !== 'ok')).toEqual([]);
    expect(report.checks.every((check) => check.fix === undefined)).toBe(true);
    // The extra CA is named as it was given: an option, not a flag or a file.
    expect(line(report, 'TLS').detail).toMatch(/, trusted \(Node's roots \+ network\.tls\.ca\)$/);
    expect(line(report, 'signing key').detail).toMatch(/private\.pem: RSA-4096, public key SHA256:\S+, mode 600$/);
    expect(line(report, 'signature').detail).toMatch(/^sha256\/pkcs1 accepted/);
    expect(JSON.stringify(report)).not.toContain(ctx.sandbox.token);
  });

  it('the key as PEM text or as a KeyObject: checked alike, with the same fingerprint', async () => {
    const pem = ctx.sandbox.privateKeyPem!;
    const fromFile = line(await checkSetup(options()), 'signing key').detail;
    const fingerprint = /public key (SHA256:\S+),/.exec(fromFile)![1]!;
    for (const signingKey of [pem, createPrivateKey(pem)]) {
      const report = await checkSetup(options({ signingKeyFile: undefined, signingKey }));
      expect(report.ok).toBe(true);
      expect(line(report, 'signing key')).toEqual({ name: 'signing key', status: 'ok', detail: `RSA-4096, public key ${fingerprint}` });
      expect(line(report, 'signature').status).toBe('ok');
      expect(JSON.stringify(report)).not.toContain('PRIVATE KEY');
    }
  });

  it('a wrong token: not ok, the token check failed with a fix naming the option; the token never shown', async () => {
    const token = 'lk_sandbox_not-the-right-one';
    const report = await checkSetup(options({ token }));
    expect(report.ok).toBe(false);
    expect(line(report, 'token')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^refused: 401 api_key_invalid/) });
    expect(line(report, 'token').fix).toMatch(/^check that the token option holds the key for this base URL/);
    expect(line(report, 'token').fix).not.toMatch(/CCS_TOKEN|--token-file/);
    expect(statuses(report)).toMatchObject({ TLS: 'ok', 'page base': 'skipped', signature: 'skipped', 'signing key': 'ok' });
    expect(JSON.stringify(report)).not.toContain('not-the-right-one');
  });
});

describe('checkSetup with a signing key that does not match', () => {
  it('a key the service does not know: the key checks out, its signature is refused, detection finds no scheme', async () => {
    const report = await checkSetup(options({ signingKeyFile: undefined, signingKey: otherKeyPair().privateKeyPem, detectSignature: true }));
    expect(report.ok).toBe(false);
    expect(line(report, 'signing key').status).toBe('ok');
    expect(line(report, 'detect').status).toBe('failed');
    expect(line(report, 'signature')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^sha256\/pkcs1 refused: 401 signature_invalid/) });
    expect(line(report, 'signature').fix).toMatch(/compare the fingerprint above with the registered key, and run checkSetup with detectSignature: true$/);
    expect(report.acceptedSchemes).toEqual([]);
  });

  it('a key the service would refuse (RSA-2048, EC): the signing key check fails with loadSigningKey\'s reason, the signature is not tried', async () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    for (const [signingKey, reason] of [
      [small, 'signing key is RSA-2048; the service accepts only RSA-4096 (ccs-bulk keygen makes one)'],
      [ec, 'signing key is a ec key; the service accepts only RSA-4096 (ccs-bulk keygen makes one)'],
    ] as const) {
      const report = await checkSetup(options({ signingKeyFile: undefined, signingKey }));
      expect(report.ok).toBe(false);
      expect(line(report, 'signing key')).toEqual({
        name: 'signing key',
        status: 'failed',
        detail: reason,
        fix: 'generateRsaKeyPair() (or ccs-bulk keygen --out DIR) makes an RSA-4096 pair; register its public key with the service',
      });
      expect(line(report, 'signature')).toEqual({ name: 'signature', status: 'skipped', detail: 'not checked (no usable signing key)' });
      expect(line(report, 'token').status).toBe('ok');
    }
  });

  it('no key at all: the signing key check fails naming both options', async () => {
    const report = await checkSetup(options({ signingKeyFile: undefined }));
    expect(report.ok).toBe(false);
    expect(line(report, 'signing key')).toMatchObject({ status: 'failed', detail: 'none configured', fix: expect.stringMatching(/^pass signingKeyFile \(the PEM file\) or signingKey/) });
  });

  describe('a service on another scheme', () => {
    let pss: Sandbox;
    beforeAll(async () => {
      pss = await startSandbox({ publicKeyPem: ctx.sandbox.publicKeyPem!, signature: { hash: 'sha512', padding: 'pss' } });
    });
    afterAll(() => pss?.close());

    it('the signature check fails and its fix is the option that signs the way the service accepts', async () => {
      const report = await checkSetup({ baseUrl: pss.url, token: pss.token, signingKey: ctx.sandbox.privateKeyPem!, detectSignature: true });
      expect(report.ok).toBe(false);
      expect(report.acceptedSchemes).toEqual(['sha512/pss']);
      expect(line(report, 'signature').fix).toBe("the service accepts sha512/pss: pass signature: { hash: 'sha512', padding: 'pss' }");
      const right = await checkSetup({ baseUrl: pss.url, token: pss.token, signingKey: ctx.sandbox.privateKeyPem!, signature: { hash: 'sha512', padding: 'pss' } });
      expect(right.ok).toBe(true);
      expect(line(right, 'signature').detail).toMatch(/^sha512\/pss accepted/);
      // Plain http:// to loopback: allowed, with a warning, and no TLS check.
      expect(line(right, 'base URL').status).toBe('warning');
      expect(right.checks.some((check) => check.name === 'TLS')).toBe(false);
    });
  });
});

describe('checkSetup where nothing can be reached', () => {
  it('nothing listening: TCP fails, the service checks are skipped, the key is still checked', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));

    const report = await checkSetup(options({ baseUrl: `http://127.0.0.1:${port}`, network: {} }));
    expect(report.ok).toBe(false);
    expect(statuses(report)).toEqual({
      'base URL': 'warning',
      proxy: 'ok',
      DNS: 'ok',
      TCP: 'failed',
      token: 'skipped',
      'create path': 'skipped',
      'page base': 'skipped',
      clock: 'skipped',
      'signing key': 'ok',
      signature: 'skipped',
    });
    expect(line(report, 'TCP').detail).toMatch(/ECONNREFUSED/);
    expect(line(report, 'TCP').fix).toBeTruthy();
  });

  it('a base URL createServiceClient would refuse: a failed check, not an exception', async () => {
    const report = await checkSetup(options({ baseUrl: 'http://ccs.example.com' }));
    expect(report.ok).toBe(false);
    expect(line(report, 'base URL')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^refusing plain http:\/\/ to ccs\.example\.com/) });
    expect(report.checks.filter((check) => check.status === 'failed').map((check) => check.name)).toEqual(['base URL']);
    expect(line(report, 'signing key').status).toBe('ok');
  });

  it('options that contradict themselves reject: a key and a key file', async () => {
    const error = await checkSetup(options({ signingKey: ctx.sandbox.privateKeyPem! })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ code: 'bad_option', message: 'checkSetup takes signingKey or signingKeyFile, not both' });
  });
});
