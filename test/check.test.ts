import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import type { SignatureScheme } from '../src/service/signing.js';
import { otherKeyPair, runCli, runCliInProcess, sandboxEnv, useSandbox } from './helpers.js';
import { startProxy, type TestProxy } from './proxy.helpers.js';

// An HTTPS sandbox with a few clients; other sandboxes below share its key pair.
const ctx = useSandbox({ tls: true, seed: 5 });
let caFile: string;
const CLEAN = { HTTPS_PROXY: undefined, https_proxy: undefined, HTTP_PROXY: undefined, http_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

beforeAll(async () => {
  caFile = join(ctx.dir, 'ca.pem');
  await writeFile(caFile, ctx.sandbox.tls!.caPem);
});

// The sandbox's CA by CCS_CA_FILE, so that check runs in this process; the first test runs the
// real command with NODE_EXTRA_CA_CERTS.
const env = (extra: Record<string, string | undefined> = {}) => ({ ...ctx.env(), ...CLEAN, CCS_CA_FILE: caFile, ...extra });

interface Line {
  name: string;
  status: string;
  detail: string;
  fix?: string;
}
async function check(args: string[], environment: Record<string, string | undefined>) {
  const run = await runCliInProcess(['check', '--json', ...args], { env: environment });
  const report = JSON.parse(run.stdout) as { ok: boolean; checks: Line[]; acceptedSchemes?: string[] };
  const line = (name: string) => report.checks.find((l) => l.name === name)!;
  return { run, report, line };
}

describe('ccs-bulk check against the HTTPS sandbox', () => {
  it('all hold: exit 0, every line ok, in order', async () => {
    const run = await runCli(['check'], { env: env({ CCS_CA_FILE: undefined, NODE_EXTRA_CA_CERTS: caFile }) });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const names = ['base URL', 'proxy', 'DNS', 'TCP', 'TLS', 'token', 'create path', 'page base', 'clock', 'signing key', 'signature'];
    const rows = run.stdout.split('\n').filter((l) => /^ {2}\S/.test(l));
    expect(rows.map((l) => l.slice(11).trim().split(/\s{2,}/)[0])).toEqual(names);
    expect(rows.every((l) => l.startsWith('  ok '))).toBe(true);
    expect(run.stdout).toMatch(/TLS +TLSv1\.3, certificate for "localhost \(ccs-bulk sandbox\)" issued by "ccs-bulk sandbox CA [0-9a-f]+", expires .*trusted \(Node's roots \+ .*ca\.pem\)/);
    expect(run.stdout).toMatch(/page base +0 \(page=0 and page=1 are different pages\)/);
    expect(run.stdout).toMatch(/create path +POST https:\/\/\S+\/v1\/client is there: an unsigned, empty request was refused \(401 signature_missing/);
    expect(run.stdout).toMatch(/signing key +.*private\.pem: RSA-4096, public key SHA256:\S+, mode 600/);
    expect(run.stdout).toMatch(/signature +sha256\/pkcs1 accepted \(a body without name got 400; a wrong signature got 401\)/);
    expect(run.stdout).toMatch(/All checks hold: ready to import\./);
  });

  it('creates nothing', async () => {
    const size = ctx.sandbox.store.size;
    const { run } = await check(['--detect-signature'], env());
    expect(run.code).toBe(0);
    expect(ctx.sandbox.store.size).toBe(size);
  });

  it('an untrusted CA: TLS failed with the fix, the service lines skipped, exit 1', async () => {
    const { run, report, line } = await check([], env({ CCS_CA_FILE: undefined }));
    expect(run.code).toBe(1);
    expect(report.ok).toBe(false);
    expect(line('TLS')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/NOT trusted \(UNABLE_TO_VERIFY_LEAF_SIGNATURE/) });
    expect(line('TLS').fix).toMatch(/--ca-file FILE.*NODE_EXTRA_CA_CERTS/);
    expect(line('token').status).toBe('skipped');
    expect(line('signing key').status).toBe('ok');
  });

  it('a wrong token: token failed, exit 1', async () => {
    const { run, line } = await check([], env({ CCS_TOKEN: 'lk_sandbox_not-the-right-one' }));
    expect(run.code).toBe(1);
    expect(line('token')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/refused: 401 api_key_invalid/) });
    expect(line('token').fix).toMatch(/CCS_TOKEN/);
    expect(run.stdout).not.toContain('not-the-right-one');
  });

  it('a wrong key: signature failed, and --detect-signature finds no scheme', async () => {
    const other = otherKeyPair();
    const wrongKey = join(ctx.dir, 'wrong.pem');
    await writeFile(wrongKey, other.privateKeyPem, { mode: 0o600 });
    const { run, line, report } = await check(['--detect-signature'], env({ CCS_SIGNING_KEY_FILE: wrongKey }));
    expect(run.code).toBe(1);
    expect(line('signature')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/sha256\/pkcs1 refused: 401 signature_invalid/) });
    expect(line('signature').fix).toMatch(/fingerprint/);
    expect(line('detect').status).toBe('failed');
    expect(report.acceptedSchemes).toEqual([]);
  });

  it('a key its group can read: a warning with the chmod, still exit 0', async () => {
    const loose = join(ctx.dir, 'loose.pem');
    await writeFile(loose, ctx.sandbox.privateKeyPem!);
    await chmod(loose, 0o640);
    const { run, line } = await check([], env({ CCS_SIGNING_KEY_FILE: loose }));
    expect(run.code).toBe(0);
    expect(line('signing key')).toMatchObject({ status: 'warning', fix: expect.stringMatching(/chmod 600/) });
  });

  it('no signing key: failed, the network lines still checked', async () => {
    const { run, line } = await check([], env({ CCS_SIGNING_KEY_FILE: undefined }));
    expect(run.code).toBe(1);
    expect(line('signing key')).toMatchObject({ status: 'failed', detail: 'none configured' });
    expect(line('token').status).toBe('ok');
    expect(line('signature').status).toBe('skipped');
  });
});

describe('check through a proxy', () => {
  let proxy: TestProxy;
  beforeAll(async () => {
    proxy = await startProxy();
  });
  afterAll(() => proxy?.close());

  it('names the proxy in use and opens its tunnel', async () => {
    const before = proxy.tunnels.length;
    const { run, line } = await check([], env({ HTTPS_PROXY: proxy.url }));
    expect(run.code).toBe(0);
    expect(line('proxy').detail).toBe(`${proxy.url} (HTTPS_PROXY): tunnel to ${new URL(ctx.sandbox.url).host} opened`);
    expect(line('TCP').detail).toMatch(/connected to the proxy at 127\.0\.0\.1:\d+/);
    expect(proxy.tunnels.length).toBeGreaterThan(before);
  });

  it('a dead proxy: TCP to it failed, the fix names --proxy, exit 1', async () => {
    const dead = await startProxy();
    await dead.close();
    const { run, line } = await check([], env({ HTTPS_PROXY: dead.url }));
    expect(run.code).toBe(1);
    expect(line('TCP')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/the proxy http:\/\/127\.0\.0\.1:\d+ cannot be reached \(ECONNREFUSED\)/) });
    expect(line('TCP').fix).toMatch(/--proxy/);
    expect(line('token').status).toBe('skipped');
  });

  it('NO_PROXY: direct, and says why', async () => {
    const { run, line } = await check([], env({ HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }));
    expect(run.code).toBe(0);
    expect(line('proxy').detail).toBe('none: direct connection (NO_PROXY exempts this host)');
  });
});

describe('check in each signature scheme', () => {
  const schemes: SignatureScheme[] = [
    { hash: 'sha256', padding: 'pkcs1' },
    { hash: 'sha256', padding: 'pss' },
    { hash: 'sha512', padding: 'pkcs1' },
    { hash: 'sha512', padding: 'pss' },
  ];
  const started: Sandbox[] = [];
  afterAll(async () => {
    for (const sandbox of started) await sandbox.close();
  });

  it.each(schemes)('a service on $hash/$padding: the matching flags pass, --detect-signature names it', async (scheme) => {
    const sandbox = await startSandbox({ publicKeyPem: ctx.sandbox.publicKeyPem!, signature: scheme, seed: 1 });
    started.push(sandbox);
    const environment = { ...sandboxEnv(sandbox, ctx.keyFile), ...CLEAN };
    const flags = ['--signature-hash', scheme.hash, '--signature-padding', scheme.padding];
    const right = await check(flags, environment);
    expect(right.run.code).toBe(0);
    expect(right.line('signature').detail).toMatch(new RegExp(`^${scheme.hash}/${scheme.padding} accepted`));
    // Plain http:// to loopback: allowed, with a warning.
    expect(right.line('base URL').status).toBe('warning');

    const detected = await check(['--detect-signature'], environment);
    expect(detected.report.acceptedSchemes).toEqual([`${scheme.hash}/${scheme.padding}`]);
    const isDefault = scheme.hash === 'sha256' && scheme.padding === 'pkcs1';
    expect(detected.run.code).toBe(isDefault ? 0 : 1);
    if (!isDefault) {
      expect(detected.line('signature').fix).toBe(
        `the service accepts ${scheme.hash}/${scheme.padding}: use --signature-hash ${scheme.hash} --signature-padding ${scheme.padding}`,
      );
    }
  });
});
