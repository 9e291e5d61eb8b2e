/**
 * No window is ever lost: a dated incremental report run twice a day, with and without
 * --overwrite, clients created between the runs — every client ends in exactly one file that
 * still exists. --overwrite of the last output exports its window again with the new one;
 * replacing any other file is refused, saying why; the output_exists hint suggests {datetime}.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportClients } from '../src/export/run-export.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import { exportCli, parseCsv } from './export.helpers.js';
import { makeTempDir } from './helpers.js';

let sandbox: Sandbox;
let service: ServiceClient;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false });
  service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, retry: { retries: 0 } });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
  await temp?.cleanup();
});

/** Every id in every CSV file of `dir`, with the files holding it. */
async function where(dir: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.csv'))) {
    for (const row of parseCsv(await readFile(join(dir, name), 'utf8'))) found.set(row.id!, [...(found.get(row.id!) ?? []), name]);
  }
  return found;
}

function expectEachOnce(found: Map<string, string[]>, ids: readonly string[]): void {
  const wrong = ids.filter((id) => found.get(id)?.length !== 1).map((id) => `${id}: ${found.get(id)?.join(', ') ?? 'no file'}`);
  expect(wrong).toEqual([]);
}

describe('the same dated report twice a day (library, a fixed clock)', () => {
  it('with --overwrite the second run holds both windows; without it, it is refused; every client in one file', async () => {
    const dir = join(temp.dir, 'day');
    await mkdir(dir);
    const state = join(dir, 'state.json');
    const at = (iso: string) => sandbox.store.insert({ status: 'approved', created_at: iso }).id;
    const run = (now: string, overwrite = false) =>
      exportClients({
        service,
        out: join(dir, 'approved-{date}.csv'),
        status: 'approved',
        columns: ['id', 'created_at'],
        createdFrom: '2032-01-01',
        sinceLast: state,
        overwrite,
        now: () => new Date(now),
      });
    const morning = [at('2032-03-01T08:00:00.000Z'), at('2032-03-01T09:59:59.999Z')];
    const first = await run('2032-03-01T10:00:00.000Z');
    expect(first.rows).toBe(2);
    const noon = [at('2032-03-01T10:00:00.000Z'), at('2032-03-01T12:00:00.000Z')];
    // Without overwrite: refused, the hint names the same report with the time in it (in the library's words).
    await expect(run('2032-03-01T14:00:00.000Z')).rejects.toThrow(
      /approved-2032-03-01\.csv exists: .*pass overwrite: true \(in an incremental run only if it is the last run's own file: its clients are exported again, with the new ones; any other file: move it away\), or one with the time: out: '.*approved-\{datetime\}\.csv'/,
    );
    const second = await run('2032-03-01T14:00:00.000Z', true);
    expect(second.rows).toBe(4);
    expect(second.incremental).toMatchObject({ replaced: { out: join(dir, 'approved-2032-03-01.csv'), from: '2032-01-01T00:00:00.000Z' } });
    const evening = [at('2032-03-01T18:00:00.000Z')];
    const third = await run('2032-03-01T20:00:00.000Z', true);
    expect(third.rows).toBe(5);
    const night = [at('2032-03-01T23:00:00.000Z')];
    const nextDay = await run('2032-03-02T02:00:00.000Z');
    expect(nextDay.rows).toBe(1);
    expect(nextDay.incremental).toMatchObject({ previousBound: '2032-03-01T20:00:00.000Z' });
    expect(nextDay.incremental?.replaced).toBeUndefined();
    expect(await readdir(dir)).toEqual(expect.arrayContaining(['approved-2032-03-01.csv', 'approved-2032-03-02.csv']));
    expectEachOnce(await where(dir), [...morning, ...noon, ...evening, ...night]);
  });

  it('an existing file that is not the last output is never replaced: refused, naming the last output', async () => {
    const dir = join(temp.dir, 'other');
    await mkdir(dir);
    const state = join(dir, 'state.json');
    const base = { service, status: 'rejected', columns: ['id'], createdFrom: '2033-01-01', sinceLast: state } as const;
    sandbox.store.insert({ status: 'rejected', created_at: '2033-01-01T01:00:00.000Z' });
    await exportClients({ ...base, out: join(dir, 'monday.csv'), now: () => new Date('2033-01-01T02:00:00.000Z') });
    await exportClients({ ...base, out: join(dir, 'tuesday.csv'), now: () => new Date('2033-01-02T02:00:00.000Z') });
    const before = await readFile(state, 'utf8');
    const again = exportClients({ ...base, out: join(dir, 'monday.csv'), overwrite: true, now: () => new Date('2033-01-03T02:00:00.000Z') });
    await expect(again).rejects.toThrow(/monday\.csv exists and is not the last output of .*state\.json \(.*tuesday\.csv\): replacing it would leave the clients it holds in no file/);
    expect(await readFile(state, 'utf8')).toBe(before);
  });
});

describe('ccs-bulk export, a dated report run twice a day (the CLI)', () => {
  it('without and with --overwrite, clients created between: every client in exactly one file that still exists', async () => {
    const dir = join(temp.dir, 'cli');
    await mkdir(dir);
    const args = ['export', '--status', 'pending_documents', '--columns', 'id', '--quiet', '--json'];
    const report = [...args, '--since-last', join(dir, 'state.json'), '--out', join(dir, 'docs-{date}.csv')];
    const made: string[] = [];
    const add = (n: number) => {
      for (let i = 0; i < n; i++) made.push(sandbox.store.insert({ status: 'pending_documents' }).id);
    };
    add(5);
    const first = await exportCli(report, env);
    expect(first.code).toBe(0);
    add(3);
    const refused = await exportCli(report, env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/\[output_exists\]/);
    expect(refused.stderr).toContain(`or one with the time: --out '${join(dir, 'docs-{datetime}.csv')}'`);
    // The hint's own suggestion works: a new file for the new window.
    const timed = await exportCli([...args, '--since-last', join(dir, 'state.json'), '--out', join(dir, 'docs-{datetime}.csv')], env);
    expect(timed.code).toBe(0);
    expect(JSON.parse(timed.stdout).rows).toBe(3);
    add(2);
    // --overwrite of a file that is not the last output: refused, nothing changes.
    const notLast = await exportCli([...report, '--overwrite'], env);
    expect(notLast.code).toBe(2);
    expect(notLast.stderr).toMatch(/is not the last output of/);
    const latest = JSON.parse(timed.stdout).out as string;
    const replaced = await exportCli([...args, '--since-last', join(dir, 'state.json'), '--out', latest, '--overwrite'], env);
    expect(replaced.code).toBe(0);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ rows: 5, replaced: true });
    expectEachOnce(await where(dir), made);
  });
});
