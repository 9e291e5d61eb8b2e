import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../src/cli/resume-command.js';
import { startGate } from './gate.helpers.js';
import { BIN, CLIENT_HEADER, readResults, runCliInProcess, shellWords, useSandbox, validRows } from './helpers.js';


const ctx = useSandbox({ latencyMs: 40 });

// Child processes signing RSA-4096 on a loaded 2-core machine: well above the default 60 s.
const BOUND = 180_000;

describe('Ctrl-C', () => {
  it('sends nothing more, finishes in-flight requests, counts every row once, prints the resume command and exits 3', async () => {
    const input = join(ctx.dir, 'clients.csv');
    const results = join(ctx.dir, 'clients.results.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(100)]));
    // After 30 requests the rest wait at a gate: the Ctrl-C lands mid-run on any machine.
    const gate = await startGate(ctx.sandbox.url);
    gate.close(30);
    const child = spawn(process.execPath, [BIN, 'import', input, '--results', results, '--concurrency', '4'], {
      env: { ...process.env, ...ctx.env(), CCS_BASE_URL: gate.url },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // One Ctrl-C only: a second one would mean "exit at once".
    let interrupted = false;
    const poll = setInterval(async () => {
      const text = await readFile(results, 'utf8').catch(() => '');
      if (!interrupted && gate.held > 0 && text.split(',created,').length > 20) {
        interrupted = true;
        clearInterval(poll);
        child.kill('SIGINT');
        // What is in flight must finish.
        gate.open();
      }
    }, 10);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(poll);
    expect(code).toBe(3);
    expect(stderr).toMatch(/^Stopped after \d+ of 100 rows .*\n {2}cause: interrupted\n/m);
    // The summary adds up: every row of the file in exactly one count, and the account says so.
    const counts = /^Stopped after \d+ of 100 rows [^:]*: (.*)$/m.exec(stderr)![1]!;
    const sum = [...counts.matchAll(/(\d+) [a-z]/g)].reduce((total, match) => total + Number(match[1]), 0);
    expect(sum, counts).toBe(100);
    expect(stderr).toMatch(/account: 100 rows read .*100 outcomes recorded: every row accounted for/);
    const resume = /to continue: (.*)/.exec(stderr)?.[1];
    expect(resume).toBe(`ccs-bulk import ${shellQuote(input)} --results ${shellQuote(results)} --concurrency 4 --resume`);

    // Every row has its line: sent, or not_attempted (nothing more went out after the Ctrl-C).
    const lines = await readResults(results);
    expect(lines.map((l) => Number(l[0])).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(lines.filter((l) => l[1] === 'not_attempted').length).toBeGreaterThan(0);
    // In-flight requests finished: every client the sandbox holds has its created line.
    expect(lines.filter((l) => l[1] === 'created')).toHaveLength(ctx.sandbox.store.size);

    const args = shellWords(resume!).slice(1);
    // The resume goes through the gate too: a results file records the service it was written
    // against (the gate's URL), and --resume refuses another.
    const rest = await runCliInProcess([...args, '--json', '--quiet'], { env: { ...ctx.env(), CCS_BASE_URL: gate.url } }).finally(() => gate.stop());
    expect(rest.code).toBe(0);
    expect(ctx.sandbox.store.size).toBe(100);
    const summary = JSON.parse(rest.stdout);
    expect(summary.counts.skipped + summary.counts.created).toBe(100);
  }, BOUND);

  it('a second Ctrl-C exits at once, and resume still ends with exactly one client per row', async () => {
    const input = join(ctx.dir, 'twice.csv');
    const results = join(ctx.dir, 'twice.results.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(60, 1000)]));
    const before = ctx.sandbox.store.size;
    // Requests wait at a gate after the 10th: after the first Ctrl-C the run waits for them, so
    // only a second one ends it.
    const gate = await startGate(ctx.sandbox.url);
    gate.close(10);
    const child = spawn(process.execPath, [BIN, 'import', input, '--results', results, '--concurrency', '8'], {
      env: { ...process.env, ...ctx.env(), CCS_BASE_URL: gate.url },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let closed = false;
    const done = new Promise<number | null>((resolve) =>
      child.on('close', (code) => {
        closed = true;
        resolve(code);
      }),
    );
    while (!(gate.held > 0 && (await readFile(results, 'utf8').catch(() => '')).split(',created,').length > 10)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Ctrl-C until it ends: two signals too close together are merged by the kernel into one,
    // and a busy machine may hold a process back long enough for that.
    while (!closed) {
      child.kill('SIGINT');
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
    const code = await done;
    gate.drop();
    gate.open();
    expect(code).toBe(3);
    expect(stderr, stderr).toContain('stopped at once (second interrupt)');
    // The way back is printed before it exits, with every row read in one count.
    const after = stderr.slice(stderr.indexOf('stopped at once (second interrupt)'));
    expect(after).toContain(`to continue: ccs-bulk import ${shellQuote(input)} --results ${shellQuote(results)} --concurrency 8 --resume`);
    const read = Number(/Stopped at once after (\d+) rows? read: /.exec(after)?.[1]);
    const counted = /read: ([^;\n]*)/.exec(after)![1]!;
    const inFlight = Number(/(\d+) in flight when stopped: --resume sends them again with their keys/.exec(after)?.[1]);
    expect(inFlight).toBeGreaterThan(0);
    expect([...counted.matchAll(/(\d+) [a-z]/g)].reduce((total, match) => total + Number(match[1]), inFlight)).toBe(read);
    // The resume goes through the gate too: a results file records the service it was written
    // against (the gate's URL), and --resume refuses another.
    const rest = await runCliInProcess(['import', input, '--results', results, '--resume', '--json', '--quiet'], {
      env: { ...ctx.env(), CCS_BASE_URL: gate.url },
    }).finally(() => gate.stop());
    expect(rest.code).toBe(0);
    expect(ctx.sandbox.store.size - before).toBe(60);
    const lines = await readResults(results);
    expect(lines.filter((l) => l[1] === 'created')).toHaveLength(60);
  }, BOUND);

  it('SIGTERM (a pod stopping) stops the run cleanly: its summary names it and prints the resume command', async () => {
    const input = join(ctx.dir, 'term.csv');
    const results = join(ctx.dir, 'term.results.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(60, 5000)]));
    const gate = await startGate(ctx.sandbox.url);
    gate.close(10);
    const child = spawn(process.execPath, [BIN, 'import', input, '--results', results, '--concurrency', '4', '--quiet'], {
      env: { ...process.env, ...ctx.env(), CCS_BASE_URL: gate.url },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const done = new Promise<number | null>((resolve) => child.on('close', resolve));
    while (!(gate.held > 0 && (await readFile(results, 'utf8').catch(() => '')).split(',created,').length > 5)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGTERM');
    gate.open();
    const code = await done;
    await gate.stop();
    expect(code).toBe(3);
    // --quiet: one line, with the code, the counts and the way back.
    const line = stderr.trim().split('\n').at(-1)!;
    expect(line).toMatch(/^ccs-bulk: import stopped \(interrupted\), exit 3: \d+ created, 0 failed, 0 invalid, 0 duplicate, \d+ not attempted; to continue: /);
    expect(line.endsWith(`to continue: ccs-bulk import ${shellQuote(input)} --results ${shellQuote(results)} --concurrency 4 --quiet --resume`)).toBe(true);
    expect((await readResults(results)).length).toBe(60);
  }, BOUND);
});
