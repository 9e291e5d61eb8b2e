import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { call, create, expectErrorShape, validBody } from './sandbox.helpers.js';

// Signatures are pinned in sandbox.auth.test.ts; here they would only slow the checks down.
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false });
});
afterAll(() => sandbox?.close());

describe('Create Client', () => {
  it('creates a client: 200 (as the service documents), numeric timestamp, the published client detail', async () => {
    const body = validBody({ name: 'Zoë "Quote", Ltd' });
    const before = Date.now();
    const answer = await create(sandbox, body);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
    expect(answer.json.status).toBe('success');
    expect(typeof answer.json.timestamp).toBe('number');
    const client = answer.json.data;
    expect(client).toEqual({
      id: expect.stringMatching(/^cli_[0-9a-f]{24}$/),
      name: 'Zoë "Quote", Ltd',
      status: 'pending_review',
      credit_status: 'inactive',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      email: body.email,
      country: 'DE',
      address: body.address,
      currency: 'EUR',
      bank_information: { iban: null, account_number: null, swift_code: null },
      documents: [],
    });
    expect(Date.parse(client.created_at)).toBeGreaterThanOrEqual(before - 1);
    expect(sandbox.store.get(client.id)).toEqual(client);
    expect(sandbox.store.byIdempotencyKey(body.idempotency_key as string)?.id).toBe(client.id);
  });

  it('replays the same key and body: 200, the same client, no second client', async () => {
    const body = validBody();
    const first = await create(sandbox, body);
    const size = sandbox.store.size;
    const replays = sandbox.stats.replays;
    const second = await create(sandbox, body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.json.data).toEqual(first.json.data);
    expect(sandbox.store.size).toBe(size);
    expect(sandbox.stats.replays).toBe(replays + 1);
  });

  it('treats the same content with other key order or whitespace as a replay', async () => {
    const body = validBody();
    const first = await create(sandbox, body);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await create(sandbox, JSON.stringify(reordered, null, 1));
    expect(second.status).toBe(200);
    expect(second.json.data.id).toBe(first.json.data.id);
  });

  it('refuses the same key with another body: 409 idempotency_conflict', async () => {
    const body = validBody();
    await create(sandbox, body);
    const size = sandbox.store.size;
    const answer = await create(sandbox, { ...body, address: 'somewhere else' });
    expect(answer.status).toBe(409);
    expectErrorShape(answer);
    expect(answer.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'idempotency_conflict',
      param: 'idempotency_key',
    });
    expect(sandbox.store.size).toBe(size);
    expect(sandbox.stats.conflicts).toBeGreaterThan(0);
  });

  it('omitted optional fields give a null currency', async () => {
    const { currency, liquidity_type, application_date, ...required } = validBody();
    const answer = await create(sandbox, required);
    expect(answer.status).toBe(200);
    expect(answer.json.data.currency).toBeNull();
  });
});

describe('Create Client refusals', () => {
  const cases: [string, () => string | Record<string, unknown>, number, string, string | null][] = [
    ['broken JSON', () => '{"name": ', 400, 'invalid_json', null],
    ['a JSON array', () => '[1,2]', 400, 'invalid_json', null],
    ['an unknown field', () => validBody({ nickname: 'x' }), 400, 'parameter_unknown', 'nickname'],
    ['a missing name', () => validBody({ name: undefined }), 400, 'parameter_missing', 'name'],
    [
      'a missing idempotency_key',
      () => validBody({ idempotency_key: undefined }),
      400,
      'parameter_missing',
      'idempotency_key',
    ],
    ['an empty email', () => validBody({ email: '' }), 400, 'parameter_missing', 'email'],
    ['a blank country', () => validBody({ country: '  ' }), 400, 'parameter_missing', 'country'],
    ['a null address', () => validBody({ address: null }), 400, 'parameter_missing', 'address'],
    ['a number for a name', () => validBody({ name: 42 }), 400, 'parameter_invalid_type', 'name'],
    ['a bad email', () => validBody({ email: 'not-an-email' }), 422, 'invalid_email', 'email'],
    ['a lowercase country', () => validBody({ country: 'de' }), 422, 'invalid_country', 'country'],
    ['an alpha-3 country', () => validBody({ country: 'DEU' }), 422, 'invalid_country', 'country'],
    ['a lowercase currency', () => validBody({ currency: 'eur' }), 422, 'invalid_currency', 'currency'],
    [
      'another liquidity_type',
      () => validBody({ liquidity_type: 'pool' }),
      422,
      'invalid_liquidity_type',
      'liquidity_type',
    ],
    [
      'an impossible date',
      () => validBody({ application_date: '2023-02-29' }),
      422,
      'invalid_date',
      'application_date',
    ],
    [
      'a non-ISO date',
      () => validBody({ application_date: '01/05/2024' }),
      422,
      'invalid_date',
      'application_date',
    ],
  ];

  it.each(cases)('refuses %s', async (_, body, status, code, param) => {
    const size = sandbox.store.size;
    const answer = await create(sandbox, body());
    expect(answer.status).toBe(status);
    expectErrorShape(answer);
    expect(answer.json.error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(sandbox.store.size).toBe(size);
  });

  it('refuses a non-JSON content type', async () => {
    const answer = await create(sandbox, validBody(), { headers: { 'content-type': 'text/plain' } });
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe('invalid_content_type');
  });

  it('accepts a JSON content type with a charset', async () => {
    const answer = await create(sandbox, validBody(), {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(answer.status).toBe(200);
  });

  it('refuses a body over 1 MiB', async () => {
    const answer = await create(sandbox, validBody({ address: 'x'.repeat(1024 * 1024 + 10) }));
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe('body_too_large');
  });

  it('honours a renamed application date field', async () => {
    const local = await startSandbox({ verifySignatures: false, applicationDateField: 'submitted_on' });
    try {
      const { application_date, ...rest } = validBody();
      expect((await create(local, { ...rest, submitted_on: '2024-01-31' })).status).toBe(200);
      const old = await create(local, validBody());
      expect(old.json.error).toMatchObject({ code: 'parameter_unknown', param: 'application_date' });
      const bad = await create(local, {
        ...validBody(),
        application_date: undefined,
        submitted_on: '2024-13-01',
      });
      expect(bad.json.error).toMatchObject({ code: 'invalid_date', param: 'submitted_on' });
    } finally {
      await local.close();
    }
  });
});

describe('Get Client and routing', () => {
  it('gets a client by id with a numeric timestamp', async () => {
    const created = await create(sandbox, validBody());
    const answer = await call(sandbox, `/v1/clients/${created.json.data.id}`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      status: 'success',
      timestamp: expect.any(Number),
      data: created.json.data,
    });
  });

  it('answers 404 resource_missing for an unknown id', async () => {
    const answer = await call(sandbox, '/v1/clients/cli_000000000000000000000000');
    expect(answer.status).toBe(404);
    expectErrorShape(answer);
    expect(answer.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'id',
    });
  });

  it('answers 404 in the error schema for unknown paths', async () => {
    for (const path of ['/', '/v1', '/v2/clients', '/v1/clients/a/b', '/v1/client/']) {
      const answer = await call(sandbox, path);
      expect(answer.status, path).toBe(404);
      expectErrorShape(answer);
    }
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const get = await call(sandbox, '/v1/client');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expectErrorShape(get);
    const post = await call(sandbox, '/v1/clients', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });
});
