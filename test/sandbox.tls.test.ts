import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runSandbox } from '../src/commands/sandbox.js';
import { UsageError } from '../src/errors.js';
import { parseOutage } from '../src/sandbox/faults.js';
import { startSandbox } from '../src/sandbox/index.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { createServiceClient } from '../src/service/client.js';
import { runCli, shellAssignments } from './helpers.js';
import { call } from './sandbox.helpers.js';
import { capture, waitFor } from './stream.helpers.js';


describe('ccs-bulk sandbox --tls', () => {
  it('writes the CA (and a client certificate) and prints ready export lines that a CLI run can use as they are', async () => {
    const out = capture();
    const err = capture();
    const stop = new AbortController();
    const running = runSandbox(
      { port: 0, seed: 3, tls: true, tlsClientCert: true, verifySignatures: false },
      { stdout: out.stream, stderr: err.stream, signal: stop.signal },
    );
    try {
      await waitFor(() => out.text().includes('Press Ctrl-C'));
      const text = out.text();
      expect(text).toMatch(/listening on https:\/\/127\.0\.0\.1:\d+/);
      const exports = text.split('\n').filter((line) => line.startsWith('  export ')).join(' ');
      const env = shellAssignments(exports);
      expect(Object.keys(env).sort()).toEqual(['CCS_BASE_URL', 'CCS_CLIENT_CERT_FILE', 'CCS_CLIENT_KEY_FILE', 'CCS_TOKEN', 'NODE_EXTRA_CA_CERTS']);
      const [ca, cert, key] = [env.NODE_EXTRA_CA_CERTS!, env.CCS_CLIENT_CERT_FILE!, env.CCS_CLIENT_KEY_FILE!].map(shellQuote);
      expect(text).toContain(`curl -s --cacert ${ca} --cert ${cert} --key ${key} `);
      expect(env).toMatchObject({
        NODE_EXTRA_CA_CERTS: expect.stringMatching(/ca\.pem$/),
        CCS_CLIENT_CERT_FILE: expect.stringMatching(/client\.pem$/),
        CCS_CLIENT_KEY_FILE: expect.stringMatching(/client-key\.pem$/),
      });
      expect(text).not.toContain('PRIVATE KEY');

      const run = await runCli(['export', '--format', 'jsonl', '--quiet'], { env });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout.trim().split('\n')).toHaveLength(3);
      stop.abort();
      await running;
      expect(existsSync(env.NODE_EXTRA_CA_CERTS!)).toBe(false);
      expect(existsSync(env.CCS_CLIENT_KEY_FILE!)).toBe(false);
    } finally {
      stop.abort();
      await running.catch(() => {});
    }
  });

  it('--tls-client-cert without --tls is a usage error', async () => {
    const io = { stdout: capture().stream, stderr: capture().stream };
    await expect(runSandbox({ port: 0, tlsClientCert: true, verifySignatures: false }, io)).rejects.toThrow(UsageError);
  });
});

describe('sandbox outage schedule', () => {
  it.each([
    ['30:60', { atMs: 30_000, forMs: 60_000, kind: '503' }],
    ['0.5:3', { atMs: 500, forMs: 3000, kind: '503' }],
    ['10:5:drop', { atMs: 10_000, forMs: 5000, kind: 'drop' }],
  ])('--outage %s', (text, expected) => {
    expect(parseOutage(text)).toEqual(expected);
  });

  it.each(['30', '-1:5', '1:2:reset', 'a:b'])('refuses --outage %s', (text) => {
    expect(() => parseOutage(text)).toThrow(UsageError);
  });

  it('answers 503 during the window (counted from the first request), then serves again', async () => {
    const sandbox = await startSandbox({ verifySignatures: false, outage: { atMs: 0, forMs: 300, kind: '503' } });
    try {
      const down = await call(sandbox, '/v1/clients');
      expect(down.status).toBe(503);
      expect(down.json.error.code).toBe('service_unavailable');
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect((await call(sandbox, '/v1/clients')).status).toBe(200);
      expect(sandbox.stats.faults.outage).toBe(1);
    } finally {
      await sandbox.close();
    }
  });
});

describe('Create Client status', () => {
  it('the client accepts 201 as well as the documented 200', async () => {
    const client = {
      id: 'cli_1',
      name: 'A',
      status: 'pending_review',
      credit_status: 'inactive',
      created_at: '2026-01-01T00:00:00.000Z',
      email: 'a@example.com',
      country: 'DE',
      address: 'x',
      currency: 'EUR',
      bank_information: { iban: null, account_number: null, swift_code: null },
      documents: [],
    };
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'success', timestamp: 1, data: client }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const service = createServiceClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 't',
      signer: { scheme: { hash: 'sha256', padding: 'pkcs1' }, sign: async () => 'c2ln' },
    });
    try {
      const reply = await service.createClient({ name: 'A', idempotency_key: 'k', email: 'a@example.com', country: 'DE', address: 'x' });
      expect(reply.status).toBe(201);
      expect(reply.data.id).toBe('cli_1');
    } finally {
      await service.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
