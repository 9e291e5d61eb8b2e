/**
 * Signing keys from code: createSigner refuses at creation what loadSigningKey refuses (not
 * RSA, not RSA-4096, encrypted), with the same codes and words, instead of failing at the first
 * request as signature_invalid; a key can come as PEM text; createClient without a signer
 * rejects with a typed error.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CcsError,
  type CreateClientBody,
  createServiceClient,
  createSigner,
  loadSigningKey,
  signingKeyFromPem,
  UsageError,
} from '../src/index.js';
import { useSandbox } from './helpers.js';

// Seeded: listing has something to return whichever test runs first.
const ctx = useSandbox({ seed: 2 });

/** What `run` threw; a failure when it did not throw. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected a throw');
}

/** loadSigningKey's error for this PEM written to a private file. */
async function fileError(name: string, pem: string): Promise<unknown> {
  const file = join(ctx.dir, name);
  await writeFile(file, pem, { mode: 0o600 });
  return loadSigningKey(file).then(() => expect.unreachable('expected loadSigningKey to reject'), (error: unknown) => ({ error, file }));
}

let counter = 0;
function body(): CreateClientBody {
  counter++;
  return {
    name: `Signer ${counter}`,
    idempotency_key: `signer-${process.pid}-${counter}`,
    email: `signer${counter}@example.com`,
    country: 'DE',
    address: 'Hauptstraße 1, Berlin',
    currency: 'EUR',
    liquidity_type: 'chain',
  };
}

describe('createSigner refuses what loadSigningKey refuses, at creation', () => {
  const small = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const pemOf = (key: KeyObject) => String(key.export({ type: 'pkcs8', format: 'pem' }));

  it.each([
    ['an RSA-2048 key', small, 'key_size', 'signing key is RSA-2048; the service accepts only RSA-4096 (ccs-bulk keygen makes one)'],
    ['an EC key', ec, 'key_not_rsa', 'signing key is a ec key; the service accepts only RSA-4096 (ccs-bulk keygen makes one)'],
  ] as const)('%s: UsageError %s, the words loadSigningKey uses for a file', async (_, key, code, message) => {
    for (const given of [key, pemOf(key)]) {
      const error = thrown(() => createSigner(given));
      expect(error).toBeInstanceOf(UsageError);
      expect(error).toMatchObject({ code, message, exitCode: 2 });
    }
    // The same sentence, with the file named where the key had no name.
    const { error, file } = (await fileError(`${code}.pem`, pemOf(key))) as { error: UsageError; file: string };
    expect(error).toBeInstanceOf(UsageError);
    expect(error.code).toBe(code);
    expect(error.message).toBe(message.replace('signing key', `signing key ${file}`));
  });

  it('an encrypted PEM (PKCS#8 and PKCS#1): key_invalid, saying so, from createSigner and loadSigningKey alike', async () => {
    const key = createPrivateKey(ctx.sandbox.privateKeyPem!);
    const forms = {
      pkcs8: String(key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })),
      pkcs1: String(key.export({ type: 'pkcs1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })),
    };
    for (const [form, pem] of Object.entries(forms)) {
      const error = thrown(() => createSigner(pem));
      expect(error).toBeInstanceOf(UsageError);
      expect(error).toMatchObject({
        code: 'key_invalid',
        message: 'cannot use signing key: it is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)',
      });
      const { error: fromFile, file } = (await fileError(`encrypted-${form}.pem`, pem)) as { error: UsageError; file: string };
      expect(fromFile).toMatchObject({
        code: 'key_invalid',
        message: `cannot use signing key ${file}: it is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)`,
      });
    }
  });

  it('a public key or text that is no key: key_invalid, the text never shown', () => {
    const publicKey = createPublicKey(ctx.sandbox.privateKeyPem!);
    expect(thrown(() => createSigner(publicKey))).toMatchObject({ code: 'key_invalid', message: expect.stringMatching(/it is a public key/) });
    const junk = thrown(() => createSigner('lk_sandbox_this-is-a-token-not-a-key')) as UsageError;
    expect(junk).toMatchObject({ code: 'key_invalid', message: expect.stringMatching(/^cannot use signing key: it is not a PEM private key/) });
    expect(junk.message).not.toContain('this-is-a-token');
  });
});

describe('a key from PEM text', () => {
  it('signingKeyFromPem loads the PEM, as an environment variable holds it; createSigner takes it directly', async () => {
    const pem = ctx.sandbox.privateKeyPem!;
    const key = signingKeyFromPem(pem, 'CCS_SIGNING_KEY_PEM');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(4096);
    // The documented path, the PEM text and the loaded key all sign what the sandbox accepts.
    for (const signer of [createSigner(createPrivateKey(pem)), createSigner(pem), createSigner(key)]) {
      const service = createServiceClient({ baseUrl: ctx.sandbox.url, token: ctx.sandbox.token, signer });
      try {
        const created = await service.createClient(body());
        expect(created.data.id).toBeTruthy();
      } finally {
        await service.close();
      }
    }
  });

  it('its newlines written as \\n on one line (an env file) load too', () => {
    const oneLine = ctx.sandbox.privateKeyPem!.trim().replaceAll('\n', '\\n');
    expect(oneLine).not.toContain('\n');
    expect(signingKeyFromPem(oneLine).asymmetricKeyDetails?.modulusLength).toBe(4096);
  });

  it('refuses with the name it was given, never the content', () => {
    const small = String(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }));
    const error = thrown(() => signingKeyFromPem(small, 'CCS_SIGNING_KEY_PEM'));
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({
      code: 'key_size',
      message: 'signing key CCS_SIGNING_KEY_PEM is RSA-2048; the service accepts only RSA-4096 (ccs-bulk keygen makes one)',
    });
  });
});

describe('createClient without a signer', () => {
  it('rejects with a UsageError (key_missing) naming the option, and sends nothing; listing still works', async () => {
    const service = createServiceClient({ baseUrl: ctx.sandbox.url, token: ctx.sandbox.token });
    const size = ctx.sandbox.store.size;
    try {
      for (const attempt of [() => service.createClient(body()), () => service.prepareCreate(body())]) {
        const error = await attempt().then(() => expect.unreachable('expected a rejection'), (caught: unknown) => caught);
        expect(error).toBeInstanceOf(UsageError);
        expect(error).toBeInstanceOf(CcsError);
        expect(error).toMatchObject({
          code: 'key_missing',
          exitCode: 2,
          message: 'createClient needs a signer: pass `signer: createSigner(key)` to createServiceClient (listing needs none)',
        });
      }
      expect(ctx.sandbox.store.size).toBe(size);
      expect((await service.listClients({ size: 1 })).data.clients).toHaveLength(1);
    } finally {
      await service.close();
    }
  });
});
