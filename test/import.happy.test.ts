import { createPrivateKey } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESULT_COLUMNS } from '../src/import/record/results.js';
import { importClients } from '../src/import/run-import.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { makeTempDir, ROOT, runCliInProcess as runCli, sandboxEnv, writeKeyFile, startTestSandbox } from './helpers.js';

const FIXTURE = join(ROOT, 'fixtures', 'clients.csv');
let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let keyFile: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  temp = await makeTempDir();
  keyFile = await writeKeyFile(temp.dir, sandbox.privateKeyPem);
});
afterAll(async () => {
  await sandbox.close();
  await temp.cleanup();
});

const readCsv = async (path: string) =>
  parse(await readFile(path), { relax_column_count: true }) as string[][];

describe('import of fixtures/clients.csv (library)', () => {
  it('creates every valid row once, byte-exact, and accounts for every row', async () => {
    const service = createServiceClient({
      baseUrl: sandbox.url,
      token: sandbox.token,
      signer: createSigner(createPrivateKey(sandbox.privateKeyPem!)),
    });
    const results = join(temp.dir, 'lib.results.csv');
    const summary = await importClients({ file: FIXTURE, service, results });
    await service.close();
    expect(summary.counts).toMatchObject({
      created: 290,
      invalid: 7,
      duplicate: 3,
      failed: 0,
      not_attempted: 0,
    });
    expect(summary.rows).toBe(300);
    expect(sandbox.store.size).toBe(290);

    const input = await readCsv(FIXTURE);
    const lines = await readCsv(results);
    expect(lines[0]).toEqual([...RESULT_COLUMNS, ...(input[0] ?? [])]);
    expect(lines).toHaveLength(301);
    expect(new Set(lines.slice(1).map((l) => l[0])).size).toBe(300);
    for (const line of lines.slice(1)) {
      const row = Number(line[0]);
      const echoed = line.slice(RESULT_COLUMNS.length);
      expect(echoed).toEqual(input[row]);
      if (line[1] !== 'created') continue;
      const client = sandbox.store.get(line[2]!);
      const [name, email, , address, currency] = input[row]!;
      expect(client?.name).toBe(name?.trim());
      expect(client?.email).toBe(email?.trim());
      expect(client?.address).toBe(address?.trim());
      expect(client?.currency).toBe(currency?.trim());
      expect(client?.country).toMatch(/^[A-Z]{2}$/);
    }
    const invalid = lines.filter((l) => l[1] === 'invalid');
    expect(invalid.find((l) => l[RESULT_COLUMNS.length] === 'Two Problems')?.[9]).toBe(
      'email: not an e-mail address ("two@"); country: unknown country "Atlantis" (use ISO 3166 alpha-2, alpha-3 or its name)',
    );
    expect((await stat(results)).mode & 0o777).toBe(0o600);
  });
});

describe('import of fixtures/clients.csv (CLI)', () => {
  it('exits 1 with invalid rows, writes results and failed files, never leaks the token', async () => {
    const fresh = await startSandbox({ publicKeyPem: sandbox.publicKeyPem!, token: sandbox.token });
    const results = join(temp.dir, 'cli.results.csv');
    const failed = join(temp.dir, 'cli.failed.csv');
    const run = await runCli(['import', FIXTURE, '--results', results, '--failed', failed], {
      env: sandboxEnv(fresh, keyFile),
    });
    expect(run.stderr).toContain('290 created');
    expect(run.code).toBe(1);
    expect(fresh.store.size).toBe(290);
    const failedRows = await readCsv(failed);
    expect(failedRows[0]).toEqual([...((await readCsv(FIXTURE))[0] ?? []), 'idempotency_key', 'error']);
    expect(failedRows).toHaveLength(8);
    for (const text of [
      run.stdout,
      run.stderr,
      await readFile(results, 'utf8'),
      await readFile(failed, 'utf8'),
    ]) {
      expect(text).not.toContain(fresh.token);
      expect(text).not.toContain('PRIVATE KEY');
    }
    await fresh.close();
  });
});
