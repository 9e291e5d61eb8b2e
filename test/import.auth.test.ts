import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { CLIENT_HEADER, makeTempDir, readResults, runCliInProcess as runCli, sandboxEnv, validRows, writeKeyFile, startTestSandbox } from './helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let base: Sandbox;
let keyFile: string;
let input: string;

beforeAll(async () => {
  temp = await makeTempDir();
  base = await startTestSandbox();
  keyFile = await writeKeyFile(temp.dir, base.privateKeyPem);
  input = join(temp.dir, 'clients.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...validRows(200)]));
});
afterAll(async () => {
  await base.close();
  await temp.cleanup();
});

describe('401/403 mid-run', () => {
  it.each([
    [401, /check the token/],
    [403, /allow-list/],
  ] as const)('%i stops the run: in-flight finish, the rest not_attempted, exit 3', async (status, hint) => {
    const sandbox = await startSandbox({
      publicKeyPem: base.publicKeyPem!,
      authFailAfter: 40,
      authFailStatus: status,
      latencyMs: 5,
    });
    const results = join(temp.dir, `auth-${status}.results.csv`);
    const run = await runCli(['import', input, '--results', results, '--concurrency', '4'], {
      env: sandboxEnv(sandbox, keyFile),
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(hint);
    expect(run.stderr).toContain('--resume');
    expect(run.stderr).not.toContain(sandbox.token);
    const lines = await readResults(results);
    expect(lines).toHaveLength(200);
    const by = (outcome: string) => lines.filter((l) => l[1] === outcome).length;
    expect(by('created')).toBe(40);
    expect(by('failed')).toBeGreaterThanOrEqual(1);
    expect(by('failed')).toBeLessThanOrEqual(4);
    expect(by('not_attempted')).toBe(200 - 40 - by('failed'));
    // Never retried: one request per failed row.
    expect(sandbox.stats.byStatus[status]).toBe(by('failed'));
    await sandbox.close();
  });

  it('a missing token or key is a usage error (exit 2) naming what to set', async () => {
    const noToken = await runCli(['import', input, '--base-url', base.url, '--overwrite'], {
      env: { CCS_SIGNING_KEY_FILE: keyFile },
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/CCS_TOKEN/);
    const noKey = await runCli(['import', input, '--overwrite'], {
      env: { CCS_BASE_URL: base.url, CCS_TOKEN: base.token },
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/CCS_SIGNING_KEY_FILE/);
    const insecure = await runCli(['import', input, '--overwrite'], {
      env: { CCS_BASE_URL: 'http://ccs.example.com', CCS_TOKEN: base.token, CCS_SIGNING_KEY_FILE: keyFile },
    });
    expect(insecure.code).toBe(2);
    expect(insecure.stderr).toMatch(/HTTPS/);
    expect(base.stats.requests).toBe(0);
  });
});
