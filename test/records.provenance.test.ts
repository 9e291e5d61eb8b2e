/**
 * A results file's sidecar says who ran the import, with which ccs-bulk, on which machine, with
 * which command line (secrets redacted), against which service, on which input (size, time and
 * SHA-256), when it started and ended and what it recorded; a resumed file keeps its earlier
 * runs. Older sidecars (four fields) are still read.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { createServiceClient, createSigner, importClients } from '../src/index.js';
import { readMeta } from '../src/import/record/results-meta.js';
import { CLIENT_HEADER, ROOT, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let files = 0;
async function inputOf(rows: string[][]): Promise<{ folder: string; input: string; results: string }> {
  const folder = join(ctx.dir, `provenance-${++files}`);
  await mkdir(folder);
  const input = join(folder, 'clients.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...rows]));
  return { folder, input, results: `${input}.results.csv` };
}

const sidecarOf = (results: string) => JSON.parse(readFileSync(`${results}.meta.json`, 'utf8')) as Record<string, unknown>;

describe("the results file's sidecar", () => {
  it('records the tool, the user, the host, the command line, the service, the input (SHA-256 included), the times and the counts', async () => {
    const { folder, input, results } = await inputOf([...validRows(4, 500), ['', 'bad', 'DE', 'S', 'EUR', '']]);
    const before = new Date().toISOString();
    const run = await runCliInProcess(['import', 'clients.csv', '--concurrency', '2', '--quiet'], { env: ctx.env(), cwd: folder });
    expect(run.code, run.stderr).toBe(1);
    const meta = sidecarOf(results);
    const stats = statSync(input);
    const user = userInfo();
    expect(meta).toMatchObject({
      ccs_bulk_results: 2,
      written_by: 'import',
      service: ctx.sandbox.url,
      input: 'clients.csv',
      tool_version: VERSION,
      user: { name: user.username, uid: user.uid },
      host: hostname(),
      cwd: folder,
      command_line: ['ccs-bulk', 'import', 'clients.csv', '--concurrency', '2', '--quiet'],
      source: {
        size: stats.size,
        mtime: stats.mtime.toISOString(),
        sha256: createHash('sha256').update(readFileSync(input)).digest('hex'),
      },
      state: 'finished',
      counts: { created: 4, invalid: 1 },
    });
    expect(meta.pid).toEqual(expect.any(Number));
    expect(meta).not.toHaveProperty('stop');
    expect(meta.started_at as string >= before).toBe(true);
    expect(meta.finished_at as string >= (meta.started_at as string)).toBe(true);
    expect(statSync(`${results}.meta.json`).mode & 0o777).toBe(0o600);
  });

  it('a stopped run records why, and its resume keeps the stopped run as an earlier run', async () => {
    const { input, results } = await inputOf([...validRows(25, 600), ['', 'bad', 'DE', 'S', 'EUR', ''], ['', 'bad2', 'DE', 'S', 'EUR', '']]);
    const stopped = await runCliInProcess(['import', input, '--max-errors', '1', '--quiet'], { env: ctx.env() });
    expect(stopped.code).toBe(3);
    expect(sidecarOf(results)).toMatchObject({ state: 'stopped', stop: { reason: 'max_errors', message: 'stopped after 1 errors (--max-errors 1)' } });
    const first = sidecarOf(results);
    const resumed = await runCliInProcess(['import', input, '--resume', '--quiet'], { env: ctx.env() });
    expect(resumed.code).toBe(1);
    const meta = sidecarOf(results);
    expect(meta).toMatchObject({ resumed: true, state: 'finished', counts: { created: 25, invalid: 2 } });
    expect(meta.earlier_runs).toEqual([
      expect.objectContaining({ started_at: first.started_at, finished_at: first.finished_at, state: 'stopped', stop: first.stop }),
    ]);
  });

  it('the library records the command line it is given, redacted, and none when given none', async () => {
    const { input, results } = await inputOf(validRows(2, 700));
    const service = createServiceClient({ baseUrl: ctx.sandbox.url, token: ctx.sandbox.token, signer: createSigner(createPrivateKey(ctx.sandbox.privateKeyPem!)) });
    try {
      const secret = 'lk_live_DoNotRecordThis1234';
      const options = { file: input, service, commandLine: ['nightly-migrate', '--token', secret, '--proxy=https://ops:hunter22@proxy.example:3128'] };
      await importClients(options);
      const meta = readFileSync(`${results}.meta.json`, 'utf8');
      expect(meta).not.toContain('DoNotRecordThis1234');
      expect(meta).not.toContain('hunter22');
      expect(sidecarOf(results).command_line).toEqual(['nightly-migrate', '--token', 'lk_live_[redacted]', expect.stringMatching(/^--proxy=https:\/\/.*\[redacted\].*proxy\.example:3128/)]);

      const other = await inputOf(validRows(2, 710));
      await importClients({ file: other.input, service });
      expect(sidecarOf(other.results)).not.toHaveProperty('command_line');
      expect(sidecarOf(other.results)).toMatchObject({ written_by: 'import', state: 'finished', counts: { created: 2 } });
    } finally {
      await service.close();
    }
  });

  it('an older sidecar (four fields) is still read, and --resume continues its file', async () => {
    const { input, results } = await inputOf(validRows(3, 800));
    expect((await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() })).code).toBe(0);
    writeFileSync(`${results}.meta.json`, `${JSON.stringify({ ccs_bulk_results: 1, written_by: 'import', service: ctx.sandbox.url, input, started_at: '2025-01-01T00:00:00.000Z' }, null, 2)}\n`);
    expect(readMeta(results)).toEqual({ writtenBy: 'import', service: ctx.sandbox.url, input, startedAt: '2025-01-01T00:00:00.000Z' });
    const resumed = await runCliInProcess(['import', input, '--resume', '--json', '--quiet'], { env: ctx.env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).counts).toMatchObject({ skipped: 3 });
    expect(sidecarOf(results).earlier_runs).toEqual([{ written_by: 'import', service: ctx.sandbox.url, started_at: '2025-01-01T00:00:00.000Z' }]);
  });
});
