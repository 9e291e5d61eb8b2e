import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createSigner, type Signer } from '../src/service/signing.js';
import { call, create, expectErrorShape, validBody } from './sandbox.helpers.js';

let sandbox: Sandbox;
let signer: Signer;

beforeAll(async () => {
  // The sandbox makes its own RSA-4096 pair: one slow key generation for the whole file.
  sandbox = await startSandbox();
  signer = createSigner(createPrivateKey(sandbox.privateKeyPem!));
});
afterAll(() => sandbox?.close());

describe('bearer token', () => {
  it('exposes a sandbox-looking token and the generated key pair', () => {
    expect(sandbox.token).toMatch(/^lk_sandbox_[0-9a-f]{32}$/);
    expect(sandbox.publicKeyPem).toContain('BEGIN PUBLIC KEY');
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses a request without Authorization with 401 authentication_error', async () => {
    const answer = await call(sandbox, '/v1/clients', { token: null });
    expect(answer.status).toBe(401);
    expectErrorShape(answer);
    expect(answer.json.error).toMatchObject({ type: 'authentication_error', code: 'api_key_missing' });
    expect(answer.json.error.message).toContain('Authorization: Bearer');
  });

  it.each([
    ['a wrong token', (token: string) => `Bearer ${token}x`],
    ['lowercase bearer', (token: string) => `bearer ${token}`],
    ['two spaces', (token: string) => `Bearer  ${token}`],
    ['no scheme', (token: string) => token],
  ])('refuses %s', async (_, header) => {
    const answer = await call(sandbox, '/v1/clients', {
      token: null,
      headers: { authorization: header(sandbox.token) },
    });
    expect(answer.status).toBe(401);
    expect(answer.json.error).toMatchObject({ type: 'authentication_error', code: 'api_key_invalid' });
  });

  it('checks the token before routing, and never echoes it', async () => {
    const answer = await call(sandbox, '/nowhere', { token: 'lk_sandbox_wrong' });
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.json)).not.toContain('lk_sandbox_wrong');
  });
});

describe('X-Signature on Create Client', () => {
  it('accepts a body signed over its exact bytes', async () => {
    const answer = await create(sandbox, validBody(), { signer });
    expect(answer.status).toBe(200);
  });

  it('refuses a missing signature with 401 signature_missing', async () => {
    const answer = await create(sandbox, validBody());
    expect(answer.status).toBe(401);
    expectErrorShape(answer);
    expect(answer.json.error).toMatchObject({ type: 'authentication_error', code: 'signature_missing' });
  });

  it('refuses garbage with 401 signature_invalid and a hint', async () => {
    const answer = await create(sandbox, validBody(), { headers: { 'x-signature': 'bm90IGEgc2lnbmF0dXJl' } });
    expect(answer.status).toBe(401);
    expect(answer.json.error.code).toBe('signature_invalid');
    expect(answer.json.error.message).toMatch(/public key.*sha256\/pkcs1.*exact bytes/);
  });

  it('refuses a signature over other bytes than those sent (re-serialized JSON)', async () => {
    const body = validBody();
    const before = sandbox.store.size;
    const signature = await signer.sign(Buffer.from(JSON.stringify(body)));
    // Same JSON value, different bytes: pretty-printed.
    const answer = await create(sandbox, JSON.stringify(body, null, 2), {
      headers: { 'x-signature': signature },
    });
    expect(answer.status).toBe(401);
    expect(answer.json.error.code).toBe('signature_invalid');
    expect(sandbox.store.size).toBe(before);
    expect(sandbox.store.byIdempotencyKey(body.idempotency_key as string)).toBeUndefined();
  });

  it('refuses a signature made with another scheme (PSS instead of PKCS#1 v1.5)', async () => {
    const pss = createSigner(createPrivateKey(sandbox.privateKeyPem!), { hash: 'sha256', padding: 'pss' });
    const answer = await create(sandbox, validBody(), { signer: pss });
    expect(answer.status).toBe(401);
  });

  it('checks the token before the signature', async () => {
    const answer = await create(sandbox, validBody(), { token: 'nope' });
    expect(answer.json.error.code).toBe('api_key_invalid');
  });

  it('does not ask for signatures on reads', async () => {
    expect((await call(sandbox, '/v1/clients')).status).toBe(200);
  });
});

describe('revoked tokens', () => {
  it('revokeToken makes every request 401', async () => {
    const local = await startSandbox({ verifySignatures: false });
    try {
      expect((await call(local, '/v1/clients')).status).toBe(200);
      local.revokeToken();
      const answer = await call(local, '/v1/clients');
      expect(answer.status).toBe(401);
      expect(answer.json.error.code).toBe('api_key_revoked');
      expect((await create(local, validBody())).status).toBe(401);
    } finally {
      await local.close();
    }
  });

  it('authFailAfter lets N creates through, then refuses everything', async () => {
    const local = await startSandbox({ verifySignatures: false, authFailAfter: 2 });
    try {
      expect((await create(local, validBody())).status).toBe(200);
      expect((await create(local, validBody())).status).toBe(200);
      expect((await create(local, validBody())).status).toBe(401);
      expect((await call(local, '/v1/clients')).status).toBe(401);
      expect(local.store.size).toBe(2);
      expect(local.stats.byStatus[401]).toBe(2);
    } finally {
      await local.close();
    }
  });

  it('authFailStatus 403 simulates an IP allow-list refusal', async () => {
    const local = await startSandbox({ verifySignatures: false, authFailAfter: 0, authFailStatus: 403 });
    try {
      const answer = await call(local, '/v1/clients');
      expect(answer.status).toBe(403);
      expect(answer.json.error).toMatchObject({ type: 'authorization_error', code: 'ip_not_allowed' });
    } finally {
      await local.close();
    }
  });
});

describe('keys the sandbox is given', () => {
  it('verifies with a provided public key and generates no private key', async () => {
    const local = await startSandbox({ publicKeyPem: sandbox.publicKeyPem! });
    try {
      expect(local.privateKeyPem).toBeUndefined();
      expect((await create(local, validBody(), { signer })).status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it('refuses a key that is not PEM, or not RSA-4096, with a UsageError', async () => {
    await expect(startSandbox({ publicKeyPem: 'not a key' })).rejects.toThrow(UsageError);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    await expect(startSandbox({ publicKeyPem: String(small) })).rejects.toThrow(/RSA-4096/);
  });

  it('uses the configured scheme', async () => {
    const local = await startSandbox({
      publicKeyPem: sandbox.publicKeyPem!,
      signature: { hash: 'sha512', padding: 'pss' },
    });
    try {
      const key = createPrivateKey(sandbox.privateKeyPem!);
      const right = createSigner(key, { hash: 'sha512', padding: 'pss' });
      expect((await create(local, validBody(), { signer: right })).status).toBe(200);
      const answer = await create(local, validBody(), { signer });
      expect(answer.status).toBe(401);
      expect(answer.json.error.message).toContain('sha512/pss');
    } finally {
      await local.close();
    }
  });
});
