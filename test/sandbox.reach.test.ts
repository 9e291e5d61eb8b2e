/**
 * Who can reach the sandbox: on 0.0.0.0 it says where it really listens, warns that other
 * machines can connect and takes only a token that is hard to guess; on loopback a rehearsal
 * keeps its simple token. Requests go to 127.0.0.1 only, whatever address is bound.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { startSandbox } from '../src/sandbox/index.js';
import { isLoopbackAddress, isLoopbackHost, tokenWeakness } from '../src/sandbox/reach.js';
import { BIN, cliEnv, collectOutput, ROOT, runCli } from './helpers.js';

/** A strong token of the kind `openssl rand -base64 24` prints. */
const STRONG = 'q7Vb2Kx9LmZ4Rt1Yw8Np3Hs6';

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** `ccs-bulk sandbox …` as a child process, once its banner is out (or it has exited). */
async function startCommand(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--no-verify-signatures', ...args], {
    cwd: ROOT,
    env: cliEnv(),
    stdio: 'pipe',
  });
  children.push(child);
  const output = collectOutput(child);
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => {
      if (output.stdout.includes('Press Ctrl-C')) resolve();
    });
    void closed.then((code) => reject(new Error(`sandbox exited (${code}) before its banner: ${output.stderr}`)));
  });
  const stop = async () => {
    child.kill('SIGTERM');
    return closed;
  };
  return { output, stop };
}

/** GET /v1/clients on 127.0.0.1 with `token`: its status. */
async function listClients(port: string, token: string): Promise<number> {
  const response = await request(`http://127.0.0.1:${port}/v1/clients`, { headers: { authorization: `Bearer ${token}` } });
  await response.body.dump();
  return response.statusCode;
}

describe('ccs-bulk sandbox --host', () => {
  it('0.0.0.0: prints the address it listens on and a loopback URL, warns, and serves on 127.0.0.1', async () => {
    const { output, stop } = await startCommand(['--host', '0.0.0.0']);
    const port = /^ccs-bulk sandbox listening on http:\/\/0\.0\.0\.0:(\d+) \(all interfaces\)$/m.exec(output.stdout)?.[1];
    expect(port, output.stdout).toBeDefined();
    expect(output.stdout).toContain(`  local URL:    http://127.0.0.1:${port}\n`);
    expect(output.stdout).toContain(`export CCS_BASE_URL=http://127.0.0.1:${port} `);
    expect(output.stderr).toContain('ccs-bulk: warning: the sandbox listens on every network interface: other machines can reach it');
    // No --token: the one made for the run is one a stranger cannot guess.
    const token = /token:\s+(\S+)/.exec(output.stdout)?.[1];
    expect(token).toMatch(/^lk_sandbox_[0-9a-f]{32}$/);
    expect(tokenWeakness(token!)).toBeUndefined();
    expect(await listClients(port!, token!)).toBe(200);
    expect(await listClients(port!, 'weak')).toBe(401);
    expect(await stop()).toBe(0);
  });

  it('0.0.0.0 with a weak --token: exit 2 with the reason, nothing started', async () => {
    for (const token of ['weak', 'test', 'x'.repeat(40), 'passwordpasswordpassword']) {
      const run = await runCli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--no-verify-signatures', '--token', token]);
      expect(run.code, token).toBe(2);
      expect(run.stderr).toMatch(/the sandbox token \(--token\) is too weak for host 0\.0\.0\.0 \(--host\), which other machines can reach: .*\[bad_option\]/);
      expect(run.stderr).toContain('Leave --token out for a random one');
      expect(run.stdout).not.toContain('listening');
    }
  });

  it('0.0.0.0 with a strong --token: accepted, with the warning', async () => {
    const { output, stop } = await startCommand(['--host', '0.0.0.0', '--token', STRONG]);
    const port = /listening on http:\/\/0\.0\.0\.0:(\d+)/.exec(output.stdout)?.[1];
    expect(output.stderr).toContain('other machines can reach it');
    expect(await listClients(port!, STRONG)).toBe(200);
    expect(await stop()).toBe(0);
  });

  it('127.0.0.1 with --token weak: a loopback rehearsal keeps its simple token, and no warning', async () => {
    const { output, stop } = await startCommand(['--host', '127.0.0.1', '--token', 'weak']);
    const port = /^ccs-bulk sandbox listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(output.stdout)?.[1];
    expect(port, output.stdout).toBeDefined();
    expect(output.stdout).not.toContain('local URL');
    expect(output.stderr).toBe('');
    expect(await listClients(port!, 'weak')).toBe(200);
    expect(await stop()).toBe(0);
  });
});

describe('ccs-bulk sandbox --clock --seed-until', () => {
  it('the command starts its clock there and seeds up to it: clients in the weeks before the given now', async () => {
    const { output, stop } = await startCommand(['--token', STRONG, '--seed', '40', '--clock', '2026-03-30T04:30:00Z', '--seed-until', 'now']);
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output.stdout)?.[1];
    expect(output.stdout).toMatch(/clock: +2026-03-30T04:30:\d\d\.\d{3}Z \(--clock;/);
    const clock = await request(`http://127.0.0.1:${port}/_sandbox/clock`, { headers: { authorization: `Bearer ${STRONG}` } });
    const now = ((await clock.body.json()) as { data: { now: string } }).data.now;
    expect(Date.parse(now) - Date.parse('2026-03-30T04:30:00Z')).toBeLessThan(120_000);
    const listed = await request(`http://127.0.0.1:${port}/v1/clients?size=1&direction=desc`, { headers: { authorization: `Bearer ${STRONG}` } });
    const newest = ((await listed.body.json()) as { data: { clients: { created_at: string }[] } }).data.clients[0]!.created_at;
    // Seeded up to the sandbox's now, not to the default end (2026-01-01) nor the machine's date.
    expect(Date.parse(newest)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
    expect(Date.parse(newest)).toBeLessThanOrEqual(Date.parse(now));
    expect(await stop()).toBe(0);
  });
});

describe('startSandbox (the library) on an address other machines reach', () => {
  it('refuses a weak token before starting, and says where it listens', async () => {
    await expect(startSandbox({ host: '0.0.0.0', token: 'test', verifySignatures: false })).rejects.toThrow(UsageError);
    const sandbox = await startSandbox({ host: '0.0.0.0', verifySignatures: false });
    try {
      const port = new URL(sandbox.url).port;
      expect(sandbox.url).toBe(`http://127.0.0.1:${port}`);
      expect(sandbox.listening).toEqual({ url: `http://0.0.0.0:${port}`, allInterfaces: true, loopback: false });
    } finally {
      await sandbox.close();
    }
    const local = await startSandbox({ token: 'test', verifySignatures: false });
    try {
      expect(local.listening).toEqual({ url: local.url, allInterfaces: false, loopback: true });
    } finally {
      await local.close();
    }
  });
});

describe('the rules', () => {
  it.each([
    ['weak', 'it has 4 characters, fewer than 24'],
    ['x'.repeat(40), 'it uses only 1 different characters, fewer than 8'],
    ['passwordpasswordpassword', 'it uses only 7 different characters, fewer than 8'],
    ['Abcdefgh12Abcdefgh12Abcdefgh12', 'it repeats "Abcdefgh12"'],
    [STRONG, undefined],
    ['lk_sandbox_0123456789abcdef0123456789abcdef', undefined],
    ['3f0a9c2e-5b71-4d8e-a6f4-9e2b7c1d0a58', undefined],
  ])('token %j: %s', (token, why) => {
    expect(tokenWeakness(token)).toBe(why);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.4.5.6', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.1.2.3', false],
    ['192.168.0.10', false],
    ['fe80::1', false],
    ['not-an-address', false],
  ])('address %s is loopback: %s', (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });

  it('a host is loopback by its address, localhost by name', async () => {
    expect(await isLoopbackHost('127.0.0.1')).toBe(true);
    expect(await isLoopbackHost('localhost')).toBe(true);
    expect(await isLoopbackHost('0.0.0.0')).toBe(false);
    expect(await isLoopbackHost('')).toBe(false);
  });
});
