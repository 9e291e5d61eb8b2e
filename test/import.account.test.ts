import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { stringify } from 'csv-stringify/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../src/cli/cli.js';
import { injected } from '../src/infra/inject.js';
import type { RawRecord } from '../src/import/read/index.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { CLIENT_HEADER, cliEnv, collectOutput, ROOT, readResults, useSandbox, validRows } from './helpers.js';

// The end-of-run account: a run may exit 0 or 1 only when the input was read to its end and
// every row read has exactly one outcome in the results file. Each case injects what could
// leave a gap (src/infra/inject.ts) and checks that the real check, or main's guard, catches it.

const ctx = useSandbox({ seed: 0 });

afterEach(() => {
  injected.batches = undefined;
  injected.send = undefined;
  injected.probeTimer = undefined;
});

function sink(): Writable & { text: string } {
  const out = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        out.text += String(chunk);
        done();
      },
    }),
    { text: '' },
  );
  return out;
}

/** The CLI in this process (so the injected faults apply), with its output captured. */
async function cli(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  let code: number | string;
  try {
    code = await runCliInProcess(args, ctx.env(), { stdout, stderr });
  } catch (error) {
    code = (error as { code?: string }).code ?? String(error);
  }
  return { code, stdout: stdout.text, stderr: stderr.text };
}

let files = 0;
async function csvFile(rows: number): Promise<string> {
  files++;
  const file = join(ctx.dir, `account-${files}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, 10_000 * files)]));
  return file;
}

async function* only(batches: AsyncIterable<RawRecord[]>, keep: (index: number) => boolean | 'stop') {
  let index = 0;
  for await (const batch of batches) {
    const verdict = keep(index++);
    if (verdict === 'stop') return;
    if (verdict) yield batch;
  }
}

describe('the end-of-run account (validate and import)', () => {
  it('a complete run reports its figures in the summary, --json and the log', async () => {
    const file = await csvFile(3000);
    const log = `${file}.log`;
    const run = await cli(['validate', file, '--json', '--log-file', log]);
    expect(run.code).toBe(0);
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(file));
    expect(JSON.parse(run.stdout).account).toMatchObject({
      complete: true,
      inputEnd: true,
      bytesRead: size,
      sizeBytes: size,
      rowsRead: 3000,
      outcomesRecorded: 3000,
    });
    expect(run.stderr).toContain(`account: 3000 rows read (${size} of ${size} bytes), 3000 outcomes recorded: every row accounted for`);
    const finished = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.event === 'run_finished');
    expect(finished.account).toMatchObject({ complete: true, rows_read: 3000, outcomes_recorded: 3000, bytes_read: size, size_bytes: size });
  });

  it('values with quotes, commas and line breaks do not confuse the read-back', async () => {
    files++;
    const file = join(ctx.dir, `account-${files}.csv`);
    const rows = validRows(50).map((row, i) => [`${row[0]} "the ${i}th",\n""quoted""`, ...row.slice(1, 3), `"${row[3]}"\r\n,end"`, ...row.slice(4)]);
    await writeFile(file, stringify([CLIENT_HEADER, ...rows]));
    const run = await cli(['validate', file, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).account).toMatchObject({ complete: true, rowsRead: 50, outcomesRecorded: 50 });
  });

  it('a reader that ends early: exit 3, incomplete_run, the input not read to its end', async () => {
    const file = await csvFile(5000);
    injected.batches = (batches) => only(batches, (i) => (i === 0 ? true : 'stop'));
    const run = await cli(['validate', file, '--json']);
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout);
    expect(summary.stopped).toMatchObject({ reason: 'incomplete_run', code: 'incomplete_run' });
    expect(summary.stopped.message).toMatch(/the input was not read to its end \(\d+ of \d+ bytes\); the first row without an outcome is row \d+/);
    expect(summary.account).toMatchObject({ complete: false, inputEnd: false });
    expect(summary.account.bytesRead).toBeLessThan(summary.account.sizeBytes);
    expect(summary.account.firstMissing).toBe(summary.account.rowsRead + 1);
    expect(run.stderr).toMatch(/cause: the run cannot account for every row/);
  });

  it('a batch lost between the reader and the pipeline: exit 3, naming its first row', async () => {
    const file = await csvFile(5000);
    let firstLost = 0;
    injected.batches = (batches) =>
      (async function* () {
        let index = 0;
        for await (const batch of batches) {
          if (index++ === 1) firstLost = batch[0]!.row;
          else yield batch;
        }
      })();
    const run = await cli(['validate', file, '--json']);
    expect(run.code).toBe(3);
    expect(firstLost).toBeGreaterThan(1);
    const summary = JSON.parse(run.stdout);
    expect(summary.account).toMatchObject({ complete: false, inputEnd: true, firstMissing: firstLost, rowsRead: 5000 });
    expect(summary.stopped.message).toContain(`row ${firstLost} never reached the pipeline; the first row without an outcome is row ${firstLost}`);
  });

  it('a send that settles without recording its row: exit 3, naming the row, with the --resume command', async () => {
    const file = await csvFile(40);
    injected.send = (send, raw) => (raw.row === 17 ? Promise.resolve() : send(raw));
    const run = await cli(['import', file, '--json', '--concurrency', '4']);
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts.created).toBe(39);
    expect(summary.account).toMatchObject({ complete: false, firstMissing: 17, outcomesRecorded: 39 });
    expect(run.stderr).toContain('row 17 has no outcome in the results file; the first row without an outcome is row 17');
    expect(run.stderr).toContain(`to continue: ccs-bulk import ${shellQuote(file)} --json --concurrency 4 --resume`);
    // Resumed without the fault: the missing row goes out, the others are skipped as created.
    injected.send = undefined;
    const resumed = await cli(['import', file, '--json', '--resume']);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      counts: { created: 1, skipped: 39 },
      account: { complete: true, createdEarlier: 39, outcomesRecorded: 1, rowsRead: 40 },
    });
  });

  it('--shard and --resume: rows of other shards and rows created earlier are accounted for, not gaps', async () => {
    const file = await csvFile(60);
    const first = await cli(['import', file, '--shard', '1/2', '--json']);
    expect(first.code).toBe(0);
    const one = JSON.parse(first.stdout);
    expect(one.account).toMatchObject({ complete: true, rowsRead: 60 });
    expect(one.account.otherShardRows).toBe(one.shard.otherRows);
    expect(one.account.outcomesRecorded + one.account.otherShardRows).toBe(60);
    const again = await cli(['import', file, '--shard', '1/2', '--resume', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).account).toMatchObject({
      complete: true,
      outcomesRecorded: 0,
      createdEarlier: one.counts.created,
      otherShardRows: one.account.otherShardRows,
    });
  });
});

/** A child process running the built CLI's main() with one fault injected first. */
function runInjected(fault: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dist = (path: string) => pathToFileURL(join(ROOT, 'dist', path)).href;
  const script = [
    `import { injected } from ${JSON.stringify(dist('infra/inject.js'))};`,
    `import { main } from ${JSON.stringify(dist('main.js'))};`,
    fault,
    'await main(process.argv.slice(1));',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], { env: cliEnv(ctx.env()), stdio: 'pipe' });
    const output = collectOutput(child);
    const bound = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolve({ code, ...output });
    });
    child.stdin.end();
  });
}

describe('a run whose event loop empties before it has finished (child process)', () => {
  it('a send that never settles: exit 3, incomplete_run and the --resume command, never exit 0; the resume finishes', async () => {
    const file = await csvFile(30);
    const run = await runInjected('injected.send = (send, raw) => (raw.row === 9 ? new Promise(() => {}) : send(raw));', [
      'import',
      file,
      '--concurrency',
      '2',
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/ccs-bulk: error: the run stopped unfinished: .* \[incomplete_run\]/);
    expect(run.stderr).toContain(`to continue: ccs-bulk import ${shellQuote(file)} --concurrency 2 --resume`);
    const lines = await readResults(`${file}.results.csv`);
    expect(lines.some((line) => line[0] === '9')).toBe(false);
    // The resume has nothing injected: in this process.
    const resumed = await cli(['import', file, '--resume', '--json']);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ counts: { created: 1, skipped: 29 }, account: { complete: true } });
  }, 160_000);

  it('the outage ends while reading is paused, with every probe timer firing before its time: all rows created, exit 0', async () => {
    // 10 ms a request at --concurrency 4: 100 rows take 250 ms at least, so the outage (counted
    // from the first request) lands mid-run on any machine.
    const file = await csvFile(100);
    ctx.sandbox.setFaults({ latencyMs: 10, outage: { atMs: 150, forMs: 2000, kind: '503' } });
    try {
      const run = await runInjected('injected.probeTimer = (run, ms) => setTimeout(run, Math.max(0, ms - 400));', [
        'import',
        file,
        '--concurrency',
        '4',
        '--json',
      ]);
      expect(run.stderr).toMatch(/sending paused/);
      expect(run.stderr).toMatch(/sending resumed/);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ counts: { created: 100, failed: 0 }, account: { complete: true, outcomesRecorded: 100 } });
    } finally {
      ctx.sandbox.setFaults({ latencyMs: 0, outage: undefined });
    }
  }, 160_000);
});
