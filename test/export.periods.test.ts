/**
 * Calendar periods against the sandbox, on controlled clocks (the sandbox's for the clients it
 * creates, the export command's injected start instant), so nothing depends on today's date:
 * a saved month-end report (`period: previous-month`, Europe/Berlin, incremental) run on the 1st
 * of each month writes exactly that month, one file per month named by `{period}`, every client
 * in exactly one file across a daylight-saving change; a month without a run is caught up by the
 * next one, each month in its own file; a second run on the same day writes nothing. Plain
 * periods, bounds after now, a lone `YYYY-MM`, dates written in a zone, and since-last's one
 * warning about a status filter.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { injected } from '../src/infra/inject.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { parseCsv } from './export.helpers.js';
import { makeTempDir, runCliInProcess } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;
/** The sandbox's clock: what a client created without a date gets. */
let sandboxNow = new Date('2026-01-10T09:00:00Z');

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, clock: () => sandboxNow });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});
afterEach(() => {
  injected.now = undefined;
});

/** A client created through the sandbox's admin route, dated `at` (or by the sandbox clock), as a rehearsal script would. */
async function create(fields: Record<string, unknown>): Promise<{ id: string; created_at: string }> {
  const response = await fetch(`${sandbox.url}/_sandbox/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(fields),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { id: string; created_at: string } }).data;
}

/** The export command, in this process, started at `now`. */
function exportAt(now: string, args: string[]) {
  injected.now = () => new Date(now);
  return runCliInProcess(['export', ...args], { env });
}

describe('a saved month-end report in Europe/Berlin, run on the 1st of each month', () => {
  it('writes each calendar month to its own file, once; a missed month is caught up; a second run that day writes nothing', async () => {
    const dir = join(temp.dir, 'month-end');
    await mkdir(dir);
    const config = join(dir, 'ccs-bulk.config.json');
    const report = { period: 'previous-month', timezone: 'Europe/Berlin', incremental: true, state: 'state/month-end.json', out: 'reports/{report}-{period}.csv', columns: ['id', 'created_at'] };
    await writeFile(config, JSON.stringify({ reports: { 'month-end': report } }));
    // Local month edges, as UTC instants: Berlin is UTC+1 in winter, UTC+2 from 29 March 03:00.
    const month: Record<string, string[]> = { '2025-12': [], '2026-01': [], '2026-02': [], '2026-03': [], '2026-04': [], '2026-05': [], '2026-06': [] };
    const dated = async (label: string, at: string) => month[label]!.push((await create({ name: `${label} ${at}`, created_at: at })).id);
    await dated('2025-12', '2025-12-31T22:59:59.999Z');
    await dated('2026-01', '2025-12-31T23:00:00.000Z');
    await dated('2026-01', '2026-01-31T22:59:59.999Z');
    await dated('2026-02', '2026-01-31T23:00:00.000Z');
    await dated('2026-02', '2026-02-28T22:59:59.999Z');
    await dated('2026-03', '2026-02-28T23:00:00.000Z');
    await dated('2026-03', '2026-03-29T01:30:00.000Z');
    await dated('2026-03', '2026-03-31T21:59:59.999Z');
    await dated('2026-04', '2026-03-31T22:00:00.000Z');
    await dated('2026-05', '2026-05-31T21:59:59.999Z');
    await dated('2026-06', '2026-05-31T22:00:00.000Z');
    // Clients signing up in the sandbox's own time, on days of the month.
    for (const [label, at] of [['2026-01', '2026-01-20T10:00:00Z'], ['2026-02', '2026-02-14T11:00:00Z'], ['2026-04', '2026-04-30T20:00:00Z']] as const) {
      sandboxNow = new Date(at);
      const client = await create({ name: `signed up ${at}` });
      expect(client.created_at).toBe(new Date(at).toISOString());
      month[label]!.push(client.id);
    }
    const run = (now: string) => exportAt(now, ['--config', config, '--report', 'month-end']);
    const files = async () => (await readdir(join(dir, 'reports'))).sort();
    const idsIn = async (name: string) => parseCsv(await readFile(join(dir, 'reports', name), 'utf8')).map((row) => row.id!).sort();

    // 1 February 03:15 Berlin (02:15 UTC): January.
    const feb = await run('2026-02-01T02:15:00Z');
    expect(feb.code, feb.stderr).toBe(0);
    expect(await files()).toEqual(['month-end-2026-01.csv']);
    expect(await idsIn('month-end-2026-01.csv')).toEqual([...month['2026-01']!].sort());
    // 1 March, 23:50 (still the 1st in Berlin: 22:50 UTC).
    const mar = await run('2026-03-01T22:50:00Z');
    expect(mar.code, mar.stderr).toBe(0);
    expect(await idsIn('month-end-2026-02.csv')).toEqual([...month['2026-02']!].sort());
    // 1 April 03:15 CEST: March, across the spring change.
    const apr = await run('2026-04-01T01:15:00Z');
    expect(apr.code, apr.stderr).toBe(0);
    expect(await files()).toEqual(['month-end-2026-01.csv', 'month-end-2026-02.csv', 'month-end-2026-03.csv']);
    expect(await idsIn('month-end-2026-03.csv')).toEqual([...month['2026-03']!].sort());
    expect(apr.stderr).toContain('  period: previous-month = 2026-03 in Europe/Berlin: 2026-03-01 00:00 to 2026-04-01 00:00 (end excluded)\n');
    expect(apr.stderr).toContain('  created_at (UTC): 2026-02-28T23:00:00.000Z to 2026-03-31T22:00:00.000Z, end excluded\n');

    // The cron job retried the same morning: nothing ended since, nothing written, the state kept.
    const state = await readFile(join(dir, 'state', 'month-end.json'), 'utf8');
    const again = await run('2026-04-01T09:00:00Z');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/Nothing to export: no period ended since the last run, whose file is .*month-end-2026-03\.csv; the next, 2026-04, ends 2026-05-01 00:00 Europe\/Berlin/);
    expect(await readFile(join(dir, 'state', 'month-end.json'), 'utf8')).toBe(state);

    // No run on 1 May: the run of 1 June writes April and May, each to its own file.
    const jun = await run('2026-06-01T04:00:00Z');
    expect(jun.code, jun.stderr).toBe(0);
    expect(jun.stderr).toMatch(/Exported 2 clients to .*month-end-2026-04\.csv: previous-month 2026-04 \(2026-04-01 00:00 to 2026-05-01 00:00 Europe\/Berlin, a period no run had exported\)/);
    expect(await files()).toEqual(['2026-01', '2026-02', '2026-03', '2026-04', '2026-05'].map((label) => `month-end-${label}.csv`));
    expect(await idsIn('month-end-2026-04.csv')).toEqual([...month['2026-04']!].sort());
    expect(await idsIn('month-end-2026-05.csv')).toEqual([...month['2026-05']!].sort());

    // Every client of January to May in exactly one file; December (before the first run's month) and June in none.
    const all = (await Promise.all((await files()).map(idsIn))).flat();
    expect(all.length).toBe(new Set(all).size);
    expect(new Set(all)).toEqual(new Set(['2026-01', '2026-02', '2026-03', '2026-04', '2026-05'].flatMap((label) => month[label]!)));
  });

  it('the same state with another period or zone is refused; a period report needs a period counted back from the run and {period} in its name', async () => {
    const dir = join(temp.dir, 'mismatch');
    const args = ['--out', join(dir, 'r-{period}.csv'), '--since-last', join(dir, 'state.json'), '--period', 'previous-week'];
    expect((await exportAt('2026-03-02T06:00:00Z', args)).code).toBe(0);
    const other = await exportAt('2026-03-09T06:00:00Z', [...args, '--timezone', 'Europe/Berlin']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/made with --period previous-week in UTC, not --period previous-week in Europe\/Berlin: use one state file per report \[state_mismatch\]/);
    const plain = await exportAt('2026-03-09T06:00:00Z', ['--out', join(dir, 'plain.csv'), '--since-last', join(dir, 'state.json')]);
    expect(plain.stderr).toMatch(/made with --period previous-week in UTC, not without a period: use one state file per report \[state_mismatch\]/);
    const toDate = await exportAt('2026-03-09T06:00:00Z', ['--out', join(dir, 'x-{period}.csv'), '--since-last', join(dir, 'other.json'), '--period', 'month-to-date']);
    expect(toDate.stderr).toMatch(/--period month-to-date with --since-last: a scheduled report exports whole periods counted back from each run: previous-day, previous-week, previous-month \[bad_option\]/);
    const oneName = await exportAt('2026-03-09T06:00:00Z', ['--out', join(dir, 'weekly.csv'), '--since-last', join(dir, 'other.json'), '--period', 'previous-week']);
    expect(oneName.stderr).toMatch(/weekly\.csv: a report by period writes one file per period: put \{period\} in the name \[bad_option\]/);
    expect(existsSync(join(dir, 'other.json'))).toBe(false);
  });
});

describe('a saved report\'s period and time zone', () => {
  it('are checked as the flags are, each problem named by its key', async () => {
    const config = join(temp.dir, 'bad.config.json');
    await writeFile(config, JSON.stringify({ reports: { r: { period: 'last-month', timezone: 'Europe/Berln', out: 'x-{period}.csv' } } }));
    const run = await exportAt('2026-11-28T07:00:00Z', ['--config', config, '--report', 'r']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/reports\.r\.period: "last-month": unknown period \(the calendar month before this one is previous-month\)/);
    expect(run.stderr).toMatch(/reports\.r\.timezone: "Europe\/Berln" is not an IANA time zone \(did you mean Europe\/Berlin\?\)/);
  });
});

describe('plain periods and windows', () => {
  it('--period previous-week in New York: the ISO week before the run, named after the local day', async () => {
    const dir = join(temp.dir, 'week');
    const inside = [await create({ created_at: '2026-11-02T05:00:00.000Z' }), await create({ created_at: '2026-11-09T04:59:59.999Z' })].map((c) => c.id);
    const outside = [await create({ created_at: '2026-11-02T04:59:59.999Z' }), await create({ created_at: '2026-11-09T05:00:00.000Z' })].map((c) => c.id);
    // Monday 9 November, 00:30 in New York (05:30 UTC): the week of Monday 2 to Sunday 8 November.
    const run = await exportAt('2026-11-09T05:30:00Z', ['--out', join(dir, 'week-{period}-{date}.csv'), '--period', 'previous-week', '--timezone', 'America/New_York', '--columns', 'id']);
    expect(run.code, run.stderr).toBe(0);
    const ids = parseCsv(await readFile(join(dir, 'week-2026-W45-2026-11-09.csv'), 'utf8')).map((row) => row.id);
    expect(ids.filter((id) => inside.includes(id!) || outside.includes(id!)).sort()).toEqual([...inside].sort());
    expect(run.stderr).toContain('  period: previous-week = 2026-W45 in America/New_York: 2026-11-02 00:00 to 2026-11-09 00:00 (end excluded)\n');
  });

  it('a window that starts after now is refused before any request', async () => {
    const from = await exportAt('2026-11-28T07:00:00Z', ['--out', join(temp.dir, 'future.csv'), '--created-from', '2030-01-01']);
    expect(from.code).toBe(2);
    expect(from.stderr).toMatch(/--created-from starts at 2030-01-01T00:00:00\.000Z, after now \(2026-11-28T07:00:00\.000Z\): no client can be in it yet; give a start in the past \[bad_option\]/);
    const period = await exportAt('2026-11-28T07:00:00Z', ['--out', join(temp.dir, 'future.csv'), '--period', '2026-12', '--timezone', 'Europe/Berlin']);
    expect(period.stderr).toMatch(/--period 2026-12 starts 2026-12-01 00:00 Europe\/Berlin, after now/);
    expect(existsSync(join(temp.dir, 'future.csv'))).toBe(false);
  });

  it('a lone YYYY-MM lower bound is refused with both readings; with an upper bound it is the month', async () => {
    const lone = await exportAt('2026-11-28T07:00:00Z', ['--out', join(temp.dir, 'lone.csv'), '--created-from', '2026-01']);
    expect(lone.code).toBe(2);
    expect(lone.stderr).toContain('--created-from 2026-01 alone reads two ways: that month only (--period 2026-01, or add --created-to 2026-01) or from 2026-01-01 until now (--created-from 2026-01-01): write the one you mean');
    const month = await exportAt('2026-11-28T07:00:00Z', ['--out', join(temp.dir, 'jan.csv'), '--created-from', '2026-01', '--created-to', '2026-01', '--timezone', 'Europe/Berlin']);
    expect(month.code, month.stderr).toBe(0);
    expect(month.stderr).toContain('  created_at (Europe/Berlin): 2026-01-01 00:00 to 2026-01-31 23:59:59.999\n');
    expect(month.stderr).toContain('  created_at (UTC): 2025-12-31T23:00:00.000Z to 2026-01-31T22:59:59.999Z\n');
  });

  it('--dates-in-timezone writes created_at on the zone\'s clocks, with the offset', async () => {
    const client = await create({ created_at: '2026-10-25T00:30:00.000Z' });
    const out = join(temp.dir, 'local.csv');
    const run = await exportAt('2026-11-28T07:00:00Z', ['--out', out, '--period', '2026-10-25', '--timezone', 'Europe/Berlin', '--dates-in-timezone', '--columns', 'id,created_at']);
    expect(run.code, run.stderr).toBe(0);
    expect(parseCsv(await readFile(out, 'utf8')).find((row) => row.id === client.id)?.created_at).toBe('2026-10-25T02:30:00.000+02:00');
    const xlsx = await exportAt('2026-11-28T07:00:00Z', ['--out', join(temp.dir, 'local.xlsx'), '--timezone', 'Europe/Berlin', '--dates-in-timezone']);
    expect(xlsx.stderr).toMatch(/--dates-in-timezone writes dates as text with their offset: it applies to csv and jsonl, not xlsx/);
  });

  it('since-last with a status filter warns once, on the run that makes the state, pointing to --new-since-last', async () => {
    const dir = join(temp.dir, 'warn');
    const args = (name: string) => ['--out', join(dir, name), '--since-last', join(dir, 'state.json'), '--status', 'approved'];
    const first = await exportAt('2026-11-28T07:00:00Z', args('1.csv'));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/warning: since-last lists the clients created in each window with the status they have when it runs: .*use --new-since-last/);
    const second = await exportAt('2026-11-28T08:00:00Z', [...args('2.csv'), '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('warning:');
    expect(JSON.parse(second.stdout)).toMatchObject({ timeZone: 'UTC', incremental: { resumed: true } });
    expect(JSON.parse(second.stdout).warnings).toBeUndefined();
  });
});
