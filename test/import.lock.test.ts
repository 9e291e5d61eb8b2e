/** One run per results file (and per --failed file): a live holder refuses, a dead one is taken over. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { LockedError, lockFile } from '../src/infra/lock.js';
import { type Gate, startGate } from './gate.helpers.js';
import { BIN, CLIENT_HEADER, readResults, runCli, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ROWS = 40;
let input: string;
let inputs = 0;

const ctx = useSandbox({ latencyMs: 20 });

/** Rows no other test sent: the sandbox's client count then tells this test's rows apart. */
async function freshInput(): Promise<string> {
  inputs++;
  const path = join(ctx.dir, `clients-${inputs}.csv`);
  await writeFile(path, stringify([CLIENT_HEADER, ...validRows(ROWS, inputs * 10_000)]));
  return path;
}

beforeAll(async () => {
  input = await freshInput();
});

interface Finished {
  child: ChildProcess;
  code: number | null;
  stderr: string;
}

function start(args: string[], env = ctx.env()): { child: ChildProcess; done: Promise<Finished> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout!.resume();
  const done = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ child, code, stderr })));
  return { child, done };
}

/** A pid that was in use a moment ago and is not any more. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('two runs on one results file', () => {
  it('started together: exactly one runs, the other exits 2 at once naming it', async () => {
    const results = join(ctx.dir, 'together.results.csv');
    const input = await freshInput();
    const failed = join(ctx.dir, 'together.failed.csv');
    const before = ctx.sandbox.store.size;
    const args = ['import', input, '--results', results, '--failed', failed, '--resume', '--quiet'];
    // The winner waits at the closed gate until the other has been refused, however slowly either starts.
    const gate = await startGate(ctx.sandbox.url);
    gate.close();
    const started = [start(args, gateEnv(gate)), start(args, gateEnv(gate))];
    const first = await Promise.race(started.map((run) => run.done)).finally(() => gate.open());
    const runs = await Promise.all(started.map((run) => run.done)).finally(() => gate.stop());
    expect(first.code, first.stderr).toBe(2);
    const codes = runs.map((run) => run.code).sort();
    expect(codes, runs.map((run) => run.stderr).join('\n')).toEqual([0, 2]);
    const winner = runs.find((run) => run.code === 0)!;
    const loser = runs.find((run) => run.code === 2)!;
    expect(loser.stderr).toContain(`results file ${results}: it is in use by another ccs-bulk run (pid ${winner.child.pid} on ${hostname()}, since `);
    expect(loser.stderr).not.toMatch(/\n\s+at /);

    expect(ctx.sandbox.store.size - before).toBe(ROWS);
    const lines = await readResults(results);
    expect(lines).toHaveLength(ROWS);
    expect(new Set(lines.map((line) => line[0])).size).toBe(ROWS);
    expect(lines.every((line) => line[1] === 'created')).toBe(true);
    expect(existsSync(`${results}.lock`)).toBe(false);
    expect(existsSync(`${failed}.lock`)).toBe(false);
  });

  it('a second run that shares only the --failed file is refused too', async () => {
    const failed = join(ctx.dir, 'shared.failed.csv');
    // The first run holds its locks while its requests wait at the closed gate.
    const gate = await startGate(ctx.sandbox.url);
    gate.close();
    const first = start(['import', input, '--results', join(ctx.dir, 'a.results.csv'), '--failed', failed, '--quiet'], gateEnv(gate));
    await waitFor(() => gate.held > 0);
    // In this process: the lock it meets is the child's, another live process.
    const second = await runCliInProcess(['import', input, '--results', join(ctx.dir, 'b.results.csv'), '--failed', failed], {
      env: ctx.env(),
    });
    gate.open();
    const done = await first.done.finally(() => gate.stop());
    expect(done.code).toBe(0);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`--failed ${failed}: it is in use by another ccs-bulk run (pid ${first.child.pid} `);
    // Refused before it read or wrote anything: its results file was never made.
    expect(existsSync(join(ctx.dir, 'b.results.csv'))).toBe(false);
  });
});

describe('a lock left by a dead run', () => {
  it('after kill -9, --resume takes the lock over and ends with every row created once', async () => {
    const results = join(ctx.dir, 'killed.results.csv');
    const input = await freshInput();
    const before = ctx.sandbox.store.size;
    const args = ['import', input, '--results', results, '--resume', '--quiet'];
    // 20 requests through, the rest held: the kill lands mid-run however fast the machine is.
    const gate = await startGate(ctx.sandbox.url);
    gate.close(20);
    const run = start(args, gateEnv(gate));
    await waitFor(async () => gate.held > 0 && (await readFile(results, 'utf8').catch(() => '')).split(',created,').length > 20);
    run.child.kill('SIGKILL');
    await run.done;
    gate.drop();
    gate.open();
    const left = JSON.parse(readFileSync(`${results}.lock`, 'utf8'));
    expect(left.pid).toBe(run.child.pid);

    // The resume goes through the gate too: a results file records the service it was written
    // against (the gate's URL), and --resume refuses another.
    const log = join(ctx.dir, 'killed.log');
    const rest = await runCliInProcess([...args, '--json', '--log-file', log], { env: gateEnv(gate) }).finally(() => gate.stop());
    expect(rest.code, rest.stderr).toBe(0);
    // The log says whose lock was taken over: the trail a person taking over a migration reads.
    const events = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((line) => line.event === 'lock_taken_over')).toMatchObject({ lock: `${results}.lock`, dead_pid: run.child.pid });
    expect(ctx.sandbox.store.size - before).toBe(ROWS);
    const lines = await readResults(results);
    expect(lines.filter((line) => line[1] === 'created')).toHaveLength(ROWS);
    expect(new Set(lines.map((line) => line[0])).size).toBe(ROWS);
    expect(existsSync(`${results}.lock`)).toBe(false);
  });

  it("a dead run's temp file beside the results file (a --resume compaction killed) is removed by the next run, a live one's kept", async () => {
    const input = await freshInput();
    const results = join(ctx.dir, 'swept.results.csv');
    expect((await runCliInProcess(['import', input, '--results', results, '--quiet'], { env: ctx.env() })).code).toBe(0);
    const dead = join(ctx.dir, `.swept.results.csv.${deadPid()}.5eed0001.tmp`);
    const live = join(ctx.dir, `.swept.results.csv.${process.pid}.5eed0002.tmp`);
    writeFileSync(dead, 'row,outcome\n');
    writeFileSync(live, 'row,outcome\n');
    const resumed = await runCli(['import', input, '--results', results, '--resume'], { env: ctx.env() });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`ccs-bulk: removed a temp file left by a run that died: ${dead}\n`);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect((await readResults(results)).filter((line) => line[1] === 'created')).toHaveLength(ROWS);
  });

  it('Ctrl-C, a second Ctrl-C and an error all leave no lock behind', async () => {
    ctx.sandbox.setFaults({ latencyMs: 300 });
    try {
      for (const signals of [1, 2]) {
        const results = join(ctx.dir, `interrupted-${signals}.results.csv`);
        const run = start(['import', input, '--results', results, '--concurrency', '2']);
        await waitFor(() => existsSync(results));
        run.child.kill('SIGINT');
        if (signals === 2) setTimeout(() => run.child.kill('SIGINT'), 100);
        const { code } = await run.done;
        expect(code).toBe(3);
        expect(existsSync(`${results}.lock`)).toBe(false);
      }
    } finally {
      ctx.sandbox.setFaults({ latencyMs: 20 });
    }
    const broken = join(ctx.dir, 'broken.csv');
    await writeFile(broken, 'name,email\n"open,x\n');
    const results = join(ctx.dir, 'broken.results.csv');
    const run = await runCliInProcess(['import', broken, '--results', results], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(existsSync(`${results}.lock`)).toBe(false);
  });
});

describe('lockFile', () => {
  it('takes over a lock whose pid is dead, or whose pid now belongs to a later process, or from before a reboot', () => {
    const target = join(ctx.dir, 'unit.csv');
    const base = { host: hostname(), since: '2020-01-01T00:00:00.000Z', nonce: 'old' };
    for (const holder of [
      { ...base, pid: deadPid() },
      { ...base, pid: process.pid, start: '1' },
      { ...base, pid: process.pid, boot: 'another-boot' },
    ]) {
      writeFileSync(`${target}.lock`, JSON.stringify(holder));
      const lock = lockFile(target);
      expect(JSON.parse(readFileSync(`${target}.lock`, 'utf8')).nonce).toBe(lock.holder.nonce);
      lock.release();
      lock.release();
      expect(existsSync(`${target}.lock`)).toBe(false);
    }
  });

  it('refuses a live holder and a holder on another host; takes over a file that is not a lock', () => {
    const target = join(ctx.dir, 'unit2.csv');
    const lock = lockFile(target);
    expect(() => lockFile(target)).toThrow(LockedError);
    expect(() => lockFile(target)).toThrow(`pid ${process.pid} on ${hostname()}`);
    lock.release();

    writeFileSync(`${target}.lock`, JSON.stringify({ pid: deadPid(), host: 'elsewhere', since: '2020-01-01T00:00:00.000Z', nonce: 'x' }));
    expect(() => lockFile(target)).toThrow(`on another machine (pid`);
    expect(() => lockFile(target)).toThrow(`remove ${target}.lock`);
    writeFileSync(`${target}.lock`, 'garbage');
    const taken = lockFile(target);
    expect(taken.replaced).toBe('it is not a ccs-bulk lock (not JSON)');
    taken.release();
  });
});

function gateEnv(gate: Gate): Record<string, string> {
  return { ...ctx.env(), CCS_BASE_URL: gate.url };
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
