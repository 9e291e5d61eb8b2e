/**
 * A file name is text from outside: one holding a terminal escape (ESC, a C1 control) or a
 * bidirectional override is printed escaped (`\u001b`), in error messages, in the plan and
 * summary lines, in a lock's message, and in the `to continue:` line, which a shell still reads
 * back to the very name.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { LockedError, lockFile } from '../src/infra/lock.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { CLIENT_HEADER, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

/** Clears the screen, turns text red, reverses the rest of the line; a C1 CSI too. */
const HOSTILE = 'a\u001b[2J\u001b[31m\u202eb\u0007\u009b1m';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function expectEscaped(text: string): void {
  expect(text).not.toMatch(RAW);
  expect(text).toContain('\\u001b[2J\\u001b[31m\\u202eb\\u0007\\u009b1m');
}

let count = 0;
async function hostileInput(): Promise<string> {
  count++;
  const folder = join(ctx.dir, `case-${count}`);
  await mkdir(folder);
  const file = join(folder, `${HOSTILE}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(2, count * 100)]));
  return file;
}

/** A port that was listening a moment ago and is not any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a file name holding terminal escapes', () => {
  it('an input that is not there: the message shows the name escaped', async () => {
    const run = await runCliInProcess(['import', join(ctx.dir, `missing-${HOSTILE}.csv`), '--sandbox']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('input_missing');
    expectEscaped(run.stderr);
  });

  it('an input that is there: the plan, the summary and a review page that cannot be written show it escaped', async () => {
    const file = await hostileInput();
    const run = await runCliInProcess(['import', file, '--sandbox']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/ccs-bulk import: .*\\u001b/);
    expect(run.stderr).toMatch(/results: .*\\u001b/);
    expectEscaped(run.stderr);
    // The input itself as a folder: the page cannot be written, and the message names it.
    const page = await runCliInProcess(['import', file, '--sandbox', '--overwrite', '--report', join(file, `${HOSTILE}.html`)]);
    expect(page.code, page.stderr).not.toBe(0);
    expect(page.stderr).toMatch(/cannot write the review page .*\\u001b.*: ENOTDIR \[output_failed\]/);
    expectEscaped(page.stderr);
  });

  it('a results file that exists, and a --token-file that cannot be read: escaped', async () => {
    const file = await hostileInput();
    const results = join(ctx.dir, `exists-${HOSTILE}.csv`);
    await writeFile(results, 'row,outcome\n');
    const exists = await runCliInProcess(['import', file, '--sandbox', '--results', results]);
    expect(exists.code).toBe(2);
    expect(exists.stderr).toContain('already exists');
    expectEscaped(exists.stderr);

    const token = await runCliInProcess(['import', file, '--base-url', ctx.sandbox.url, '--token-file', join(ctx.dir, `token-${HOSTILE}`)], {
      env: { CCS_SIGNING_KEY_FILE: ctx.keyFile },
    });
    expect(token.code).toBe(2);
    expect(token.stderr).toContain('token_unreadable');
    expectEscaped(token.stderr);
  });

  it('a stopped run: the `to continue:` line holds no raw escape, and bash reads it back to the same words', async () => {
    const file = await hostileInput();
    const port = await closedPort();
    const run = await runCliInProcess(['import', file, '--base-url', `http://127.0.0.1:${port}`], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(2);
    const resume = /to continue: (.*)/.exec(run.stderr)?.[1];
    expect(resume).toBeDefined();
    expect(resume).not.toMatch(RAW);
    const words = spawnSync('bash', ['-c', `printf '%s\\0' ${resume}`], { encoding: 'utf8' });
    expect(words.status, words.stderr).toBe(0);
    expect(words.stdout.split('\0').slice(0, -1)).toEqual(['ccs-bulk', 'import', file, '--base-url', `http://127.0.0.1:${port}`, '--resume']);
  });

  it('shellQuote: plain words as they are, others single-quoted, control characters as $\'\\xHH\'', () => {
    expect(shellQuote('plain/path.csv')).toBe('plain/path.csv');
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
    expect(shellQuote(`x\u001by'\\\u202e`)).toBe(`$'x\\x1by\\'\\\\\\xe2\\x80\\xae'`);
  });

  it("a lock's message shows its path escaped", async () => {
    const target = join(ctx.dir, `locked-${HOSTILE}.csv`);
    // A well-formed lock of a run on another machine: it holds, and the message names the file to remove.
    await writeFile(`${target}.lock`, JSON.stringify({ pid: 4242, host: 'build-7.example', since: '2024-05-17T03:15:00.000Z', nonce: '5eed5eed5eed5eed' }));
    let message = '';
    try {
      lockFile(target).release();
    } catch (error) {
      expect(error).toBeInstanceOf(LockedError);
      message = (error as Error).message;
    }
    expect(message).toContain('in use by a ccs-bulk run on another machine (pid 4242 on build-7.example, since 2024-05-17T03:15:00.000Z)');
    expectEscaped(message);
  });
});
