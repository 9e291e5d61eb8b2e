import { createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, ConnectionError, ServiceError, UsageError } from '../src/errors.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClientOptions } from '../src/service/client.js';
import type { CreateClientBody } from '../src/service/schemas.js';
import { createSigner, type Signer } from '../src/service/signing.js';
import { otherKeyPair, startTestSandbox } from './helpers.js';

let sandbox: Sandbox;
let signer: Signer;
const fast = { retries: 8, baseDelayMs: 2, maxDelayMs: 20 };

beforeAll(async () => {
  sandbox = await startTestSandbox({ retryAfterSeconds: 0, seed: 5 });
  signer = createSigner(createPrivateKey(sandbox.privateKeyPem!));
});
afterAll(() => sandbox.close());

function client(extra: Partial<ServiceClientOptions> = {}) {
  return createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, signer, retry: fast, ...extra });
}

let counter = 0;
function body(overrides: Partial<CreateClientBody> = {}): CreateClientBody {
  counter++;
  return {
    name: `Client ${counter}`,
    idempotency_key: `test-${process.pid}-${counter}`,
    email: `c${counter}@example.com`,
    country: 'DE',
    address: 'Hauptstraße 1, Berlin',
    currency: 'EUR',
    liquidity_type: 'chain',
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('service client against the sandbox', () => {
  it('creates a client and replays it for the same key and body', async () => {
    const c = client();
    const b = body();
    const first = await c.createClient(b);
    const again = await c.createClient(b);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.data.id).toBe(first.data.id);
    expect(sandbox.store.byIdempotencyKey(b.idempotency_key)?.id).toBe(first.data.id);
    await c.close();
  });

  it('maps each error status to a typed error with the body fields', async () => {
    const c = client();
    const missing = await failure(c.createClient(body({ name: '' })));
    expect([missing.status, missing.type, missing.param]).toEqual([400, 'invalid_request_error', 'name']);
    expect(missing.requestId).toMatch(/^req_/);

    const badEmail = await failure(c.createClient(body({ email: 'nope' })));
    expect([badEmail.status, badEmail.param]).toEqual([422, 'email']);

    const b = body();
    await c.createClient(b);
    const conflict = await failure(c.createClient({ ...b, name: 'Someone else' }));
    expect([conflict.status, conflict.errorCode]).toEqual([409, 'idempotency_conflict']);

    const notFound = await failure(c.getClient('cli_does_not_exist'));
    expect(notFound.status).toBe(404);
    expect(notFound.attempts).toBe(1);
    await c.close();
  });

  it('refuses a wrong token with an AuthError, once, without retrying', async () => {
    const before = sandbox.stats.requests;
    const c = createServiceClient({ baseUrl: sandbox.url, token: 'lk_sandbox_wrong', signer, retry: fast });
    const error = await failure(c.listClients({}));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(3);
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/token/);
    expect(error.message).not.toContain('lk_sandbox_wrong');
    expect(sandbox.stats.requests - before).toBe(1);
    await c.close();
  });

  it('refuses a signature made with another key (401 signature_invalid)', async () => {
    const other = otherKeyPair();
    const c = client({ signer: createSigner(createPrivateKey(other.privateKeyPem)) });
    const error = await failure(c.createClient(body()));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.errorCode).toBe('signature_invalid');
    await c.close();
  });

  it('retries 503, 429 and connections cut after create, ending with exactly one client each', async () => {
    const retried = await startSandbox({
      publicKeyPem: sandbox.publicKeyPem!,
      token: sandbox.token,
      failRate: 0.2,
      throttleRate: 0.2,
      resetRate: 0.2,
      retryAfterSeconds: 0,
      seedRandom: 7,
    });
    const c = createServiceClient({
      baseUrl: retried.url,
      token: retried.token,
      signer,
      retry: { ...fast, retries: 20 },
    });
    const bodies = Array.from({ length: 40 }, () => body());
    const replies = await Promise.all(bodies.map((b) => c.createClient(b)));
    expect(retried.store.size).toBe(40);
    expect(new Set(replies.map((r) => r.data.id)).size).toBe(40);
    for (const [i, b] of bodies.entries()) {
      expect(retried.store.byIdempotencyKey(b.idempotency_key)?.id).toBe(replies[i]?.data.id);
    }
    expect(retried.stats.faults.fail).toBeGreaterThan(0);
    expect(retried.stats.faults.throttle).toBeGreaterThan(0);
    expect(retried.stats.faults.reset).toBeGreaterThan(0);
    expect(replies.some((r) => r.attempts > 1)).toBe(true);
    await c.close();
    await retried.close();
  });

  it('gives up after --retries with the last error and the attempt count', async () => {
    const down = await startSandbox({
      publicKeyPem: sandbox.publicKeyPem!,
      failRate: 1,
      retryAfterSeconds: 0,
    });
    const c = createServiceClient({
      baseUrl: down.url,
      token: down.token,
      signer,
      retry: { ...fast, retries: 2 },
    });
    const error = await failure(c.createClient(body()));
    expect(error.status).toBeGreaterThanOrEqual(500);
    expect(error.attempts).toBe(3);
    expect(down.stats.requests).toBe(3);
    await c.close();
    await down.close();
  });

  it('stops at once on a refused connection before the service ever answered (ConnectionError, no retries)', async () => {
    const gone = await startSandbox({ verifySignatures: false });
    const url = gone.url;
    await gone.close();
    const c = createServiceClient({ baseUrl: url, token: 'x', signer, retry: { ...fast, retries: 3 } });
    const error = await failure(c.listClients({}));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/nothing answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\).*check the base URL/);
    expect(error.attempts).toBe(1);
    await c.close();
  });

  it('pauses the whole client after a 429, not just the request that got it', async () => {
    const slow = await startSandbox({
      publicKeyPem: sandbox.publicKeyPem!,
      throttleRate: 1,
      retryAfterSeconds: 1,
    });
    const started = Date.now();
    let second: Promise<number> | undefined;
    // The first request meets a 429 (Retry-After: 1). A request started after that waits for
    // the shared pause even though the server would now answer it at once.
    const shared = createServiceClient({
      baseUrl: slow.url,
      token: slow.token,
      signer,
      retry: fast,
      onRetry: () => {
        slow.setFaults({ throttleRate: 0 });
        second ??= shared.listClients({}).then(() => Date.now() - started);
      },
    });
    await shared.listClients({});
    expect(second).toBeDefined();
    expect(await second).toBeGreaterThanOrEqual(900);
    await shared.close();
    await slow.close();
  });

  it('refuses plain http:// to a non-loopback host before connecting', () => {
    expect(() => createServiceClient({ baseUrl: 'http://api.example.com', token: 't' })).toThrow(UsageError);
    expect(() => createServiceClient({ baseUrl: 'http://10.0.0.8:4010', token: 't' })).toThrow(/HTTPS/);
    expect(() => createServiceClient({ baseUrl: 'ftp://127.0.0.1', token: 't' })).toThrow(UsageError);
    for (const ok of [
      'http://127.0.0.1:1',
      'http://localhost:1',
      'http://[::1]:1',
      'https://api.example.com',
    ]) {
      expect(() => createServiceClient({ baseUrl: ok, token: 't' })).not.toThrow();
    }
  });

  it('resends byte-identical bodies and signatures on retry', async () => {
    const seen: string[] = [];
    const echo = await startSandbox({
      publicKeyPem: sandbox.publicKeyPem!,
      failRate: 1,
      retryAfterSeconds: 0,
    });
    const c = createServiceClient({
      baseUrl: echo.url,
      token: echo.token,
      signer: {
        scheme: signer.scheme,
        async sign(bytes) {
          seen.push(Buffer.from(bytes).toString('base64'));
          return signer.sign(bytes);
        },
      },
      retry: { ...fast, retries: 3 },
    });
    await failure(c.createClient(body()));
    // Signed once; the same bytes went out four times.
    expect(seen).toHaveLength(1);
    expect(echo.stats.requests).toBe(4);
    await c.close();
    await echo.close();
  });
});
