/** `--help` shows examples for every command; `ccs-bulk completion` gives working bash and zsh scripts. */
import { spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, makeTempDir, runCli as runCliChild, runCliInProcess as runCli } from './helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

describe('--help examples', () => {
  it.each(['import', 'validate', 'export', 'sandbox', 'keygen'])('%s --help shows 2 or 3 examples', async (command) => {
    const run = await runCli([command, '--help']);
    expect(run.code).toBe(0);
    const examples = run.stdout.split('Examples:\n')[1] ?? '';
    const lines = examples.split('\n').filter((line) => line.startsWith(`  ccs-bulk ${command} `));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(3);
  });
});

/** Runs bash with `ccs-bulk` on PATH as a user's global install would put it. */
async function bash(script: string, env: Record<string, string> = {}): Promise<string> {
  const bin = join(temp.dir, 'bin');
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, 'ccs-bulk'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await chmod(join(bin, 'ccs-bulk'), 0o755);
  const child = spawn('bash', ['-c', script], {
    env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  expect(code).toBe(0);
  return out;
}

describe('ccs-bulk completion', () => {
  it('bash: the script completes commands and each command’s flags', async () => {
    const complete = (words: string) =>
      `COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _ccs-bulk_yargs_completions; echo "\${COMPREPLY[*]}"`;
    const out = await bash(
      ['source <(ccs-bulk completion)', complete('ccs-bulk va'), complete('ccs-bulk import --conc'), complete('ccs-bulk export --created-')].join('\n'),
      { SHELL: '/bin/bash' },
    );
    expect(out.split('\n')).toEqual(['validate', '--concurrency', '--created-from --created-to', '']);
  });

  it('zsh: the script is a compdef function over the same completions', async () => {
    // yargs picks the script by the process's own $SHELL: a child process of its own.
    const run = await runCliChild(['completion'], { env: { SHELL: '/usr/bin/zsh' } });
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith('#compdef ccs-bulk\n')).toBe(true);
    expect(run.stdout).toContain('ccs-bulk --get-yargs-completions');
    expect(run.stdout).toContain('compdef _ccs-bulk_yargs_completions ccs-bulk');
    const listed = await runCliChild(['--get-yargs-completions', 'ccs-bulk', 'sandbox', '--fail'], {
      env: { SHELL: '/usr/bin/zsh' },
    });
    expect(listed.stdout).toContain('--fail-rate');
  });
});
