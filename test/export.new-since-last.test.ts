/**
 * `--new-since-last STATE`: the clients that entered the filter since the last run — new ones
 * and older ones whose status changed into it (the sandbox's admin call changes a status) —
 * each reported once, in a state of 8-byte hashes; --overwrite of the last file keeps its clients.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashList, idHash, ReportedIds, SortedIds } from '../src/export/id-set.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { exportCli, parseCsv } from './export.helpers.js';
import { makeTempDir } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 120, seedRandom: 9 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

/** The sandbox's admin call, over HTTP as a test script would make it. */
async function setStatus(id: string, body: Record<string, string>): Promise<Response> {
  return fetch(`${sandbox.url}/_sandbox/clients/${encodeURIComponent(id)}/status`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const idsOf = async (file: string) => parseCsv(await readFile(file, 'utf8')).map((row) => row.id!);

describe('the sandbox changes a status (sandbox only)', () => {
  it('POST /_sandbox/clients/{id}/status: the client keeps its id and created_at; bad values are 400, unknown ids 404, no token 401', async () => {
    const client = sandbox.store.insert({ status: 'pending_review' });
    const changed = await setStatus(client.id, { status: 'approved', credit_status: 'active' });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as { data: unknown }).data).toMatchObject({ id: client.id, status: 'approved', credit_status: 'active', created_at: client.created_at });
    expect(sandbox.store.get(client.id)).toMatchObject({ status: 'approved' });
    expect((await setStatus(client.id, { status: 'aproved' })).status).toBe(400);
    expect((await setStatus('cli_nobody', { status: 'approved' })).status).toBe(404);
    const anonymous = await fetch(`${sandbox.url}/_sandbox/clients/${client.id}/status`, { method: 'POST', body: '{"status":"rejected"}' });
    expect(anonymous.status).toBe(401);
  });
});

describe('ccs-bulk export --new-since-last', () => {
  it('a client approved two runs after its creation appears exactly once; new approved clients too; nothing twice', async () => {
    const dir = join(temp.dir, 'approved');
    await mkdir(dir);
    const state = join(dir, 'approved.state');
    const run = async (name: string, extra: string[] = []) => {
      const result = await exportCli(
        ['export', '--status', 'approved', '--columns', 'id,status', '--new-since-last', state, '--out', join(dir, name), '--json', '--quiet', ...extra],
        env,
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      return { summary: JSON.parse(result.stdout), ids: await idsOf(join(dir, name)) };
    };
    const approvedAtStart = sandbox.store.all().filter((client) => client.status === 'approved').map((client) => client.id);
    const late = sandbox.store.insert({ status: 'pending_review' }).id;
    const r1 = await run('r1.csv');
    expect(r1.ids.sort()).toEqual([...approvedAtStart].sort());
    expect(r1.summary.incremental).toMatchObject({ mode: 'new-since-last', resumed: false, reported: approvedAtStart.length });
    expect(r1.summary.incremental.stateBytes).toBeLessThan(approvedAtStart.length * 8 + 400);
    const r2 = await run('r2.csv');
    expect(r2.ids).toEqual([]);
    expect(r2.summary.incremental.skippedAtBound).toBe(approvedAtStart.length);
    // Two runs after its creation, the client is approved; another is created approved.
    expect((await setStatus(late, { status: 'approved' })).status).toBe(200);
    const fresh = sandbox.store.insert({ status: 'approved' }).id;
    const r3 = await run('r3.csv');
    expect(r3.ids.sort()).toEqual([late, fresh].sort());
    // Leaving the filter and coming back does not report it again.
    await setStatus(late, { status: 'rejected' });
    await setStatus(late, { status: 'approved' });
    const r4 = await run('r4.csv');
    expect(r4.ids).toEqual([]);
    const all = [r1, r2, r3, r4].flatMap((r) => r.ids);
    expect(all.filter((id) => id === late)).toHaveLength(1);
    expect(new Set(all).size).toBe(all.length);
    expect((await stat(state)).mode & 0o777).toBe(0o600);
  });

  it('--overwrite of the last file writes its clients again with the new ones; another filter is refused', async () => {
    const dir = join(temp.dir, 'replay');
    await mkdir(dir);
    const state = join(dir, 'active.state');
    const base = ['export', '--credit-status', 'active', '--status', 'document_review', '--columns', 'id', '--new-since-last', state, '--quiet'];
    const a = sandbox.store.insert({ status: 'document_review', credit_status: 'active' }).id;
    expect((await exportCli([...base, '--out', join(dir, 'monday.csv')], env)).code).toBe(0);
    const b = sandbox.store.insert({ status: 'document_review', credit_status: 'active' }).id;
    expect((await exportCli([...base, '--out', join(dir, 'tuesday.csv')], env)).code).toBe(0);
    expect(await idsOf(join(dir, 'tuesday.csv'))).toEqual([b]);
    const c = sandbox.store.insert({ status: 'document_review', credit_status: 'active' }).id;
    const refused = await exportCli([...base, '--out', join(dir, 'tuesday.csv')], env);
    expect(refused.code).toBe(2);
    const replaced = await exportCli([...base, '--out', join(dir, 'tuesday.csv'), '--overwrite'], env);
    expect(replaced.code).toBe(0);
    expect((await idsOf(join(dir, 'tuesday.csv'))).sort()).toEqual([b, c].sort());
    expect(await idsOf(join(dir, 'monday.csv'))).toContain(a);
    const other = await exportCli([...base.slice(0, -1), '--status', 'approved', '--out', join(dir, 'x.csv')], env);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/\[state_mismatch\]/);
    const both = await exportCli([...base, '--since-last', join(dir, 's.json'), '--out', join(dir, 'y.csv')], env);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exclude each other/);
  });

  it('a damaged state, or a --since-last state, is exit 2 before any request', async () => {
    const dir = join(temp.dir, 'damaged');
    await mkdir(dir);
    const requests = sandbox.stats.requests;
    await writeFile(join(dir, 'json.state'), '{"version":1}');
    const json = await exportCli(['export', '--new-since-last', join(dir, 'json.state'), '--out', join(dir, 'a.csv')], env);
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/is not a ccs-bulk --new-since-last state \(it is a --since-last state/);
    await writeFile(join(dir, 'cut.state'), 'ccs-bulk new-since-last state\n{"version":1,"filters":{"status":null,"creditStatus":null},"earlier":2,"last":{"out":"x","rows":0,"finishedAt":"x","added":0}}\n12345678');
    const cut = await exportCli(['export', '--new-since-last', join(dir, 'cut.state'), '--out', join(dir, 'b.csv')], env);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/\(length\)/);
    expect(sandbox.stats.requests).toBe(requests);
  });
});

describe('the id set', () => {
  it('8 bytes an id, sorted; lookups, the merged runs and the file form agree with a Set of the ids', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `cli_${i.toString(36)}`);
    const list = new HashList();
    for (const id of ids.slice(0, 3000)) list.push(idHash(id));
    list.push(idHash(ids[0]!));
    const first = list.toSorted();
    expect(first.size).toBe(3000);
    const second = new HashList();
    for (const id of ids.slice(3000)) second.push(idHash(id));
    const both = new ReportedIds([first, second.toSorted()]);
    expect(both.size).toBe(20_000);
    expect(ids.every((id) => both.has(idHash(id)))).toBe(true);
    expect(both.has(idHash('cli_other'))).toBe(false);
    // Merged a chunk at a time (several chunks here), in order, as the state file holds them.
    const chunks = [...both.chunks(4096)];
    expect(chunks.length).toBe(5);
    const bytes = Buffer.concat(chunks);
    expect(bytes.length).toBe(20_000 * 8);
    const back = SortedIds.fromBuffer(bytes)!;
    expect(back.size).toBe(20_000);
    expect(ids.every((id) => back.has(idHash(id)))).toBe(true);
    expect(SortedIds.fromBuffer(Buffer.concat([bytes.subarray(8), bytes.subarray(0, 8)]))).toBeUndefined();
    expect(SortedIds.fromBuffer(bytes.subarray(0, 12))).toBeUndefined();
  });
});
