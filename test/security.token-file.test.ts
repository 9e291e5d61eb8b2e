/**
 * A token file every account can read (or change) is refused before anything is sent, as such
 * a signing key is; one its group can read is warned about (a Kubernetes Secret mounted for a
 * pod's fsGroup is): `run: chmod 600 FILE`. The same for the config file's
 * `connection.tokenFile`; a pipe (`--token-file <(…)`) has no mode to fix.
 */
import { spawn } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, CLIENT_HEADER, cliEnv, collectOutput, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();
let input: string;
let runs = 0;

beforeAll(async () => {
  input = join(ctx.dir, 'clients.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...validRows(2)]));
});

/** The token in a file of this mode (chmod: whatever the umask). */
async function tokenFile(mode: number): Promise<string> {
  const path = join(ctx.dir, `token-${mode.toString(8)}`);
  await writeFile(path, `${ctx.sandbox.token}\n`);
  await chmod(path, mode);
  return path;
}

function importArgs(): string[] {
  runs++;
  return ['import', input, '--results', join(ctx.dir, `run-${runs}.results.csv`), '--quiet'];
}

const env = () => ({ CCS_BASE_URL: ctx.sandbox.url, CCS_SIGNING_KEY_FILE: ctx.keyFile });

describe('--token-file', () => {
  it.for([
    { mode: 0o644, how: 'readable', shown: '644' },
    { mode: 0o604, how: 'readable', shown: '604' },
    { mode: 0o602, how: 'writable', shown: '602' },
  ] as const)('mode $shown: refused ($how by every user), nothing sent', async ({ mode, how, shown }) => {
    const path = await tokenFile(mode);
    const requests = ctx.sandbox.stats.requests;
    const run = await runCliInProcess([...importArgs(), '--token-file', path], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`ccs-bulk: error: token file ${path} is ${how} by every user (mode ${shown}); run: chmod 600 ${path} [token_invalid]\n`);
    expect(ctx.sandbox.stats.requests).toBe(requests);
  });

  it.for([
    { mode: 0o640, how: 'readable', shown: '640' },
    { mode: 0o620, how: 'writable', shown: '620' },
  ] as const)('mode $shown: used, with a warning ($how by its group)', async ({ mode, how, shown }) => {
    const path = await tokenFile(mode);
    const run = await runCliInProcess([...importArgs(), '--token-file', path], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(`ccs-bulk: warning: token file ${path} is ${how} by its group (mode ${shown}); run: chmod 600 ${path}\n`);
  });

  it.for([
    { mode: 0o600, shown: '600' },
    { mode: 0o400, shown: '400' },
  ])('mode $shown: used', async ({ mode }) => {
    const run = await runCliInProcess([...importArgs(), '--token-file', await tokenFile(mode)], { env: env() });
    expect(run.code, run.stderr).toBe(0);
  });

  it('a pipe (`--token-file <(…)` in bash) is read as it is: it has no mode of its own to fix', async () => {
    // bash hands the CLI /dev/fd/N, the read end of a pipe that printf writes the token into.
    const child = spawn('bash', ['-c', 'exec "$0" "$@" --token-file <(printf "%s\\n" "$THE_TOKEN")', process.execPath, BIN, ...importArgs()], {
      env: cliEnv({ ...env(), THE_TOKEN: ctx.sandbox.token }),
    });
    const output = collectOutput(child);
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, output.stderr).toBe(0);
  });

  it("the config file's connection.tokenFile: refused the same way", async () => {
    const path = await tokenFile(0o644);
    const config = join(ctx.dir, 'ccs-bulk.config.json');
    await writeFile(config, JSON.stringify({ connection: { baseUrl: ctx.sandbox.url, tokenFile: path, signingKeyFile: ctx.keyFile } }));
    const run = await runCliInProcess([...importArgs(), '--config', config]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`token file ${path} is readable by every user (mode 644); run: chmod 600 ${path}`);
    await chmod(path, 0o600);
    const fixed = await runCliInProcess([...importArgs(), '--config', config]);
    expect(fixed.code, fixed.stderr).toBe(0);
  });
});
