import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import {
  CLIENT_HEADER,
  makeTempDir,
  readResults,
  runCli,
  sandboxEnv,
  validRows,
  writeKeyFile,
} from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let keyFile: string;

beforeAll(async () => {
  sandbox = await startSandbox({
    failRate: 0.1,
    throttleRate: 0.05,
    resetRate: 0.03,
    retryAfterSeconds: 0,
    seedRandom: 3,
  });
  temp = await makeTempDir();
  keyFile = await writeKeyFile(temp.dir, sandbox.privateKeyPem);
});
afterAll(async () => {
  await sandbox.close();
  await temp.cleanup();
});

describe('import through 10% 503, 5% 429 and 3% cuts after create', () => {
  it('creates every row exactly once', async () => {
    const input = join(temp.dir, 'faulty.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(500)]));
    const results = join(temp.dir, 'faulty.results.csv');
    const run = await runCli(
      ['import', input, '--results', results, '--retries', '10', '--json', '--quiet'],
      {
        env: sandboxEnv(sandbox, keyFile),
      },
    );
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject({ created: 500, failed: 0 });
    expect(sandbox.store.size).toBe(500);
    const lines = await readResults(results);
    expect(lines.filter((l) => l[1] === 'created')).toHaveLength(500);
    expect(lines.some((l) => Number(l[4]) > 1)).toBe(true);
    const { fail, throttle, reset } = sandbox.stats.faults;
    expect(fail).toBeGreaterThan(10);
    expect(throttle).toBeGreaterThan(5);
    expect(reset).toBeGreaterThan(2);
  });
});
