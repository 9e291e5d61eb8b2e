/**
 * Incremental exports (`--since-last STATE`): clients created at the very instant of the bound,
 * in its second, between runs and during runs are each written exactly once over many runs; a
 * run killed mid-export leaves the state as it was and the next run covers the window.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportClients } from '../src/export/run-export.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient } from '../src/service/client.js';
import { parseCsv } from './export.helpers.js';
import { BIN, cliEnv, makeTempDir, runCliInProcess as runCli } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false });
  temp = await makeTempDir();
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

const idsOf = async (file: string) => parseCsv(await readFile(file, 'utf8')).map((row) => row.id!);

/** Counts each id over several runs' outputs. */
function tally(runs: readonly string[][]): { repeated: string[]; seen: Set<string> } {
  const seen = new Set<string>();
  const repeated: string[] = [];
  for (const id of runs.flat()) {
    if (seen.has(id)) repeated.push(id);
    seen.add(id);
  }
  return { repeated, seen };
}

describe('the boundary rule, with a fixed bound (library)', () => {
  it('clients in the same millisecond and the same second as the bound: none lost, none repeated', async () => {
    const service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, retry: { retries: 0 } });
    const dir = join(temp.dir, 'boundary');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    const state = join(dir, 'state.json');
    const b1 = new Date('2031-05-01T10:00:00.500Z');
    const b2 = new Date('2031-05-01T10:00:01.000Z');
    const b3 = new Date('2031-05-01T10:00:01.000Z');
    const at = (ms: number, tag: string) => sandbox.store.insert({ id: `cli_b_${tag}`, created_at: new Date(ms) }).id;
    const before = [at(b1.getTime() - 1, 'a'), at(b1.getTime() - 400, 'b'), at(b1.getTime(), 'c1'), at(b1.getTime(), 'c2')];
    const run = async (now: Date, name: string) => {
      const out = join(dir, name);
      const summary = await exportClients({ service, out, sinceLast: state, now: () => now, columns: ['id'], createdFrom: '2031-01-01' });
      return { summary, ids: await idsOf(out) };
    };
    const first = await run(b1, 'r1.csv');
    expect(first.ids.sort()).toEqual([...before].sort());
    expect(first.summary.incremental).toMatchObject({ resumed: false, skippedAtBound: 0 });
    // Created after run 1 read its pages, yet stamped with the bound's exact millisecond, and later in its second.
    const late = [at(b1.getTime(), 'd'), at(b1.getTime() + 1, 'e'), at(b1.getTime() + 499, 'f')];
    const second = await run(b2, 'r2.csv');
    expect(second.ids.sort()).toEqual([...late].sort());
    expect(second.summary.incremental).toMatchObject({ resumed: true, previousBound: b1.toISOString(), skippedAtBound: 2 });
    expect(second.summary.filters.createdFrom).toBe(b1.toISOString());
    // A run in the same millisecond as the last bound: the clients at it were written, nothing new.
    const third = await run(b3, 'r3.csv');
    expect(third.ids).toEqual([]);
    expect(third.summary.rows).toBe(0);
    const atB2 = at(b2.getTime(), 'g');
    const fourth = await run(new Date(b2.getTime() + 5), 'r4.csv');
    expect(fourth.ids).toEqual([atB2]);
    const { repeated, seen } = tally([first.ids, second.ids, third.ids, fourth.ids]);
    expect(repeated).toEqual([]);
    expect(seen).toEqual(new Set([...before, ...late, atB2]));
    await service.close();
  });

  it('a service that compares created_at in whole seconds: the ids near the bound keep it exact', async () => {
    // The bound's millisecond means nothing to this service: a `from` of 10:00:00.500 returns the whole second.
    const clients = [
      { id: 'x1', created_at: '2031-06-01T10:00:00Z' },
      { id: 'x2', created_at: '2031-06-01T10:00:00Z' },
    ];
    const seconds = (text: string | null) => (text === null ? null : Math.floor(Date.parse(text) / 1000));
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const from = seconds(url.searchParams.get('created_at.from'));
      const to = seconds(url.searchParams.get('created_at.to'));
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('size'));
      const matching = clients.filter((c) => {
        const s = seconds(c.created_at)!;
        return (from === null || s >= from) && (to === null || s <= to);
      });
      const body = {
        status: 'success',
        timestamp: new Date().toISOString(),
        data: { page, size, direction: 'asc', clients: matching.slice(page * size, page * size + size) },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const service = createServiceClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 'lk_sandbox_x',
      retry: { retries: 0 },
    });
    const state = join(temp.dir, 'seconds.json');
    const run = async (now: string, name: string) => {
      const out = join(temp.dir, name);
      await exportClients({ service, out, sinceLast: state, now: () => new Date(now), columns: ['id'] });
      return idsOf(out);
    };
    try {
      const r1 = await run('2031-06-01T10:00:00.500Z', 's1.csv');
      clients.push({ id: 'x3', created_at: '2031-06-01T10:00:00Z' }, { id: 'x4', created_at: '2031-06-01T10:00:01Z' });
      const r2 = await run('2031-06-01T10:00:01.250Z', 's2.csv');
      const r3 = await run('2031-06-01T10:00:09.000Z', 's3.csv');
      expect(r1).toEqual(['x1', 'x2']);
      // x3 arrived late in a second the service had already given out: it is written now, once.
      expect(r2).toEqual(['x3', 'x4']);
      expect(r3).toEqual([]);
    } finally {
      await service.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('ccs-bulk export --since-last (the CLI, runs after runs)', () => {
  it('12 consecutive runs with clients created between and during them: 0 lost, 0 repeated', async () => {
    const dir = join(temp.dir, 'runs');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    const state = join(dir, 'state.json');
    const env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
    const mine = new Set<string>();
    const add = () => mine.add(sandbox.store.insert({ status: 'approved' }).id);
    for (let i = 0; i < 30; i++) add();
    sandbox.setFaults({ latencyMs: 15 });
    const outputs: string[][] = [];
    let during = 0;
    let between = 30;
    try {
      for (let run = 0; run < 12; run++) {
        const out = join(dir, `run-${run}.csv`);
        const args = ['export', '--status', 'approved', '--page-size', '20', '--columns', 'id,created_at', '--out', out, '--since-last', state, '--quiet'];
        const child = runCli(args, { env });
        // Clients created while the run pages, some before and some after its pinned bound.
        let running = true;
        void child.finally(() => {
          running = false;
        });
        while (running) {
          add();
          during++;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const result = await child;
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        outputs.push(await idsOf(out));
        for (let i = 0; i < 3; i++) add();
        between += 3;
      }
      // One more run with nothing created during it: everything created so far is out.
      sandbox.setFaults({ latencyMs: 0 });
      const last = join(dir, 'last.csv');
      const result = await runCli(['export', '--status', 'approved', '--out', last, '--since-last', state, '--json'], { env });
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary.incremental.resumed).toBe(true);
      outputs.push(await idsOf(last));
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
    const { repeated, seen } = tally(outputs);
    const lost = [...mine].filter((id) => !seen.has(id));
    console.log(`incremental: ${outputs.length} runs, ${between} clients created between runs, ${during} during, lost ${lost.length}, repeated ${repeated.length}`);
    expect(during).toBeGreaterThan(12);
    expect(repeated).toEqual([]);
    expect(lost).toEqual([]);
    expect(seen.size).toBe(mine.size);
  }, 120_000);

  it('a run killed (kill -9) mid-export leaves the state untouched; the next run covers the window', async () => {
    const dir = join(temp.dir, 'killed');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    const state = join(dir, 'state.json');
    const env = cliEnv({ CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token });
    const base = ['export', '--credit-status', 'active', '--columns', 'id', '--quiet', '--since-last', state];
    const made = () => sandbox.store.insert({ credit_status: 'active', status: 'rejected' }).id;
    const first = Array.from({ length: 5 }, made);
    expect((await runCli([...base, '--out', join(dir, 'a.csv')], { env })).code).toBe(0);
    const before = await readFile(state, 'utf8');
    const window = Array.from({ length: 60 }, made);
    sandbox.setFaults({ latencyMs: 150 });
    const requests = sandbox.stats.requests;
    const child = spawn(process.execPath, [BIN, ...base, '--page-size', '5', '--out', join(dir, 'b.csv')], { env, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    while (sandbox.stats.requests < requests + 3) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGKILL');
    await exited;
    sandbox.setFaults({ latencyMs: 0 });
    expect(await readFile(state, 'utf8')).toBe(before);
    // No b.csv (kill -9 leaves its hidden temp file and its locks; the next run takes the locks over).
    expect((await readdir(dir)).filter((name) => !name.startsWith('.') && !name.endsWith('.lock')).sort()).toEqual([
      'a.csv',
      'state.json',
    ]);
    expect((await readdir(dir)).filter((name) => name.startsWith('.b.csv.') && name.endsWith('.tmp'))).toHaveLength(1);
    const next = await runCli([...base, '--out', join(dir, 'c.csv')], { env });
    expect(next.stderr).toBe('');
    expect(next.code).toBe(0);
    // b.csv's temp is removed by the next run in that directory, whatever its output's name.
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const a = await idsOf(join(dir, 'a.csv'));
    const c = await idsOf(join(dir, 'c.csv'));
    expect(a.sort()).toEqual(expect.arrayContaining(first));
    expect(c.sort()).toEqual([...window].sort());
    expect(JSON.parse(await readFile(state, 'utf8')).bound).not.toBe(JSON.parse(before).bound);
  }, 60_000);

  it('a damaged state or one made with other filters is exit 2 before any request', async () => {
    const state = join(temp.dir, 'bad-state.json');
    const env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
    await writeFile(state, '{"version":1,');
    const damaged = await runCli(['export', '--out', join(temp.dir, 'x.csv'), '--since-last', state], { env });
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toMatch(/state file .*bad-state\.json is not JSON/);
    const good = join(temp.dir, 'good-state.json');
    expect((await runCli(['export', '--out', join(temp.dir, 'y.csv'), '--since-last', good, '--status', 'approved'], { env })).code).toBe(0);
    const other = await runCli(['export', '--out', join(temp.dir, 'z.csv'), '--since-last', good, '--status', 'rejected'], { env });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/made with status approved, credit_status any, not status rejected/);
    const stdout = await runCli(['export', '--since-last', good], { env });
    expect(stdout.code).toBe(2);
    expect(stdout.stderr).toMatch(/--since-last needs --out FILE/);
  });
});
