import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, CLIENT_HEADER, runCli, useSandbox, validRows } from './helpers.js';

let input: string;

const ctx = useSandbox({ latencyMs: 20 });

beforeAll(async () => {
  input = join(ctx.dir, 'clients.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...validRows(150)]));
});

describe('progress on stderr', () => {
  it('prints plain lines with rows/s and counts when stderr is not a terminal', async () => {
    const run = await runCli(['import', input, '--overwrite', '--concurrency', '2', '--progress-interval', '0.2'], {
      env: ctx.env(),
    });
    expect(run.code).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => /^ccs-bulk: \d+ rows, \d+\/s \(\d+%/.test(l));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1)).toMatch(/created \d+/);
    expect(run.stderr).toContain('150 created');
  });

  it('--quiet prints nothing but errors', async () => {
    const run = await runCli(['import', input, '--overwrite', '--quiet', '--progress-interval', '0.1'], {
      env: ctx.env(),
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  });

  it('draws a bar with percentage and ETA on a terminal', async () => {
    // `script` gives the CLI a pseudo-terminal, as a user's shell would.
    const command = [process.execPath, BIN, 'import', input, '--overwrite', '--concurrency', '2']
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, ...ctx.env(), COLUMNS: '160' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      screen += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(screen).toMatch(/[█░]+ \d+% \| \d+ rows \| \d+\/s \| ETA/);
    expect(screen).toContain('150 created');
  });
});
