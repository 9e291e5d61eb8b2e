/** Small HTTP helpers shared by the sandbox tests: real requests over loopback, no mocks. */
import { type Dispatcher, request } from 'undici';
import type { Sandbox } from '../src/sandbox/index.js';
import type { Signer } from '../src/service/signing.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  json: any;
}

export interface CallOptions {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** default: the sandbox's token; null sends no Authorization header */
  token?: string | null;
  dispatcher?: Dispatcher;
}

export async function call(sandbox: Sandbox, path: string, options: CallOptions = {}): Promise<Answer> {
  const token = options.token === undefined ? sandbox.token : options.token;
  const headers: Record<string, string> = { ...options.headers };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await request(`${sandbox.url}${path}`, {
    method: options.method ?? 'GET',
    headers,
    ...(options.body !== undefined && { body: options.body }),
    ...(options.dispatcher && { dispatcher: options.dispatcher }),
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    json: text ? JSON.parse(text) : undefined,
  };
}

/** POST /v1/client with `body` (an object is serialized once), signed when a signer is given. */
export async function create(
  sandbox: Sandbox,
  body: object | string | Buffer,
  options: CallOptions & { signer?: Signer } = {},
): Promise<Answer> {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.signer) headers['x-signature'] = await options.signer.sign(Buffer.from(raw));
  return call(sandbox, '/v1/client', { ...options, method: 'POST', headers, body: raw });
}

let counter = 0;

/** A valid Create Client body with a fresh idempotency key. */
export function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    name: `Test Client ${counter}`,
    idempotency_key: `key-${process.pid}-${counter}-${Math.random().toString(16).slice(2)}`,
    email: `client${counter}@example.com`,
    country: 'DE',
    address: '1 Hauptstraße, 10115 Berlin',
    currency: 'EUR',
    liquidity_type: 'chain',
    application_date: '2024-05-01',
    ...overrides,
  };
}

/** The documented error body, with the request id echoed in the x-request-id header. */
export function expectErrorShape(answer: Answer): void {
  const error = answer.json?.error;
  if (!error) throw new Error(`expected an error body, got ${JSON.stringify(answer.json)}`);
  for (const key of ['type', 'code', 'message', 'param', 'request_id', 'doc_url', 'details']) {
    if (!(key in error)) throw new Error(`error body lacks ${key}: ${JSON.stringify(error)}`);
  }
  if (!/^req_[0-9a-f]{24}$/.test(error.request_id)) throw new Error(`bad request_id ${error.request_id}`);
  if (answer.headers['x-request-id'] !== error.request_id)
    throw new Error('x-request-id differs from request_id');
}
