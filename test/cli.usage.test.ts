/**
 * What a mistyped command line gets: the flag it probably meant, per command (edit distance),
 * why a token is never a flag, a missing FILE named as such; an empty CCS_* variable counts as
 * unset and the message says it was empty; a directory as input is `input_not_file`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../src/cli/cli.js';
import { CcsError } from '../src/errors.js';
import { closestFlags, editDistance, explainUsage } from '../src/cli/usage.js';
import { cliEnv, makeTempDir, runCli } from './helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

/** The CLI in-process, as main.ts runs it: resolves to the exit code, or rejects with the error. */
function cli(argv: string[], env: Record<string, string | undefined> = {}) {
  return runCliInProcess(argv, cliEnv(env), { stdout: new PassThrough(), stderr: new PassThrough() });
}

async function failure(argv: string[], env: Record<string, string | undefined> = {}): Promise<CcsError> {
  const error: unknown = await cli(argv, env).then(
    (code) => new Error(`exit ${code}, expected an error`),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CcsError);
  return error as CcsError;
}

describe('edit distance', () => {
  it.each([
    ['fromat', 'format', 1],
    ['dryrun', 'dryrun', 0],
    ['kitten', 'sitting', 3],
    ['', 'out', 3],
    ['ab', 'ba', 1],
  ])('%s → %s: %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });

  it('suggests by distance, then by a flag the typed name extends or shortens', () => {
    const flags = ['out', 'format', 'overwrite', 'outage-timeout', 'results', 'resume', 'retries', 'failed', 'dry-run', 'concurrency'];
    expect(closestFlags('fromat', flags)).toEqual(['format']);
    expect(closestFlags('dryrun', flags)).toEqual(['dry-run']);
    expect(closestFlags('Dry_Run', flags)).toEqual(['dry-run']);
    expect(closestFlags('output', flags)).toEqual(['out']);
    expect(closestFlags('failed-file', flags)).toEqual(['failed']);
    expect(closestFlags('conc', flags)).toEqual(['concurrency']);
    expect(closestFlags('resumee', flags)).toEqual(['resume']);
    expect(closestFlags('zzz', flags)).toEqual([]);
    expect(closestFlags('o', flags)).toEqual([]);
  });
});

describe('usage failures, by command', () => {
  it.each([
    [['export', '--fromat', 'csv'], 'unknown flag --fromat for export: did you mean --format?'],
    [['import', 'a.csv', '--dryrun'], 'unknown flag --dryrun for import: did you mean --dry-run?'],
    [['export', '--output', 'x.csv'], 'unknown flag --output for export: did you mean --out?'],
    [['import', 'a.csv', '--failed-file', 'x.csv'], 'unknown flag --failed-file for import: did you mean --failed?'],
    [['validate', 'a.csv', '--failedFile', 'x.csv'], 'unknown flag --failedFile for validate: did you mean --failed?'],
    [['import', 'a.csv', '--out', 'x.csv'], 'unknown flag --out for import: import writes --results FILE (one line per row) and --failed FILE (the rows to fix)'],
    [['import', 'a.csv', '--token', 'lk_live_abc'], 'unknown flag --token for import: tokens are not flags (they would show in `ps`): set CCS_TOKEN or --token-file'],
    [['check', '--token=lk_live_abc'], 'unknown flag --token for check: tokens are not flags (they would show in `ps`): set CCS_TOKEN or --token-file'],
    [['sandbox', '--prot', '0'], 'unknown flag --prot for sandbox: did you mean --port?'],
    [['import', 'a.csv', 'b.csv'], 'unexpected argument "b.csv" for import (one file per run: ccs-bulk import <file>)'],
    [['import'], 'missing FILE: ccs-bulk import <file>'],
    [['validate'], 'missing FILE: ccs-bulk validate <file>'],
    [['results', 'merge', '--out', 'x.csv'], 'missing FILES: ccs-bulk results merge <files..> --out FILE'],
  ])('%j → %s', async (argv, message) => {
    const error = await failure(argv);
    expect(error.message).toBe(message);
    expect(error.code).toBe('usage');
    expect(error.exitCode).toBe(2);
    expect(error.message).not.toContain('lk_live_abc');
  });

  it('each flag once, as typed, even where yargs reports a camelCase twin', () => {
    const message = explainUsage('Unknown arguments: failed-file, failedFile, fromat', ['import', 'a.csv', '--failed-file', 'x', '--fromat', 'y'], {
      command: 'import',
      flags: ['failed', 'format'],
    });
    expect(message).toBe('unknown flag --failed-file for import: did you mean --failed?; unknown flag --fromat for import: did you mean --format?');
  });

  it('a message with nothing to add is kept', () => {
    expect(explainUsage('Did you mean import?', ['improt'], undefined)).toBe('Did you mean import?');
  });

  it('the real CLI: one line, exit 2, no stack', async () => {
    const run = await runCli(['export', '--output', 'x.csv']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('ccs-bulk: error: unknown flag --output for export: did you mean --out? [usage]\n');
  });
});

describe('empty environment variables are unset, and said so', () => {
  const file = () => join(temp.dir, 'one.csv');
  beforeAll(async () => {
    await writeFile(file(), 'name,email,country,address\nA,a@example.com,DE,Street 1\n');
  });

  it.each([
    [{ CCS_BASE_URL: '', CCS_TOKEN: 'lk_sandbox_x' }, 'base_url_missing', 'no service base URL (CCS_BASE_URL is set but empty)'],
    [{ CCS_BASE_URL: 'http://127.0.0.1:9', CCS_TOKEN: ' ' }, 'token_missing', 'no API token (CCS_TOKEN is set but empty)'],
    [{ CCS_BASE_URL: 'http://127.0.0.1:9', CCS_TOKEN: 'lk_sandbox_x', CCS_SIGNING_KEY_FILE: '' }, 'key_missing', 'no signing key (CCS_SIGNING_KEY_FILE is set but empty)'],
  ])('%j → %s', async (env, code, message) => {
    const error = await failure(['import', file()], env);
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
  });

  it('an unset variable says nothing of emptiness', async () => {
    const error = await failure(['import', file()], { CCS_TOKEN: 'lk_sandbox_x' });
    expect(error.code).toBe('base_url_missing');
    expect(error.message).not.toContain('empty');
  });

  it('--signing-key "" is refused, not read as a file named ""', async () => {
    const error = await failure(['import', file(), '--signing-key', ''], { CCS_BASE_URL: 'http://127.0.0.1:9', CCS_TOKEN: 'lk_sandbox_x' });
    expect(error.code).toBe('key_missing');
    expect(error.message).toContain('--signing-key is empty');
  });

  it('empty CCS_PROXY, CCS_CA_FILE and CCS_CONFIG are unset: validate runs', async () => {
    const code = await cli(['validate', file(), '--quiet', '--overwrite'], { CCS_PROXY: '', CCS_CA_FILE: '', CCS_CONFIG: '', CCS_SHARD: '' });
    expect(code).toBe(0);
  });
});

describe('the input is a directory', () => {
  it('is input_not_file (exit 2), for validate and import', async () => {
    const dir = join(temp.dir, 'a-directory');
    await mkdir(dir);
    for (const command of ['validate', 'import']) {
      const error = await failure([command, dir, ...(command === 'import' ? ['--sandbox', '--quiet'] : [])]);
      expect(error.code).toBe('input_not_file');
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain('is a directory');
    }
  });
});
