/**
 * A shared machine: another account plants links and configs in a folder everyone can write.
 * No output is ever written through a link or into a file the run did not make, a found config
 * is read only when it is the user's own, and the files with client data are private.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, lchownSync, linkSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { chmod, chown, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, runCli, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox({ seed: 5 });
const isRoot = process.getuid?.() === 0;

/** The second account: made with useradd (as root), removed after the file's tests. */
const other = { name: `ccsplant${process.pid % 100_000}`, uid: -1, made: false };

beforeAll(() => {
  if (!isRoot) {
    console.warn('security.shared-host: not root: the cases with a second account (its links and config) are skipped; CI runs them as root');
    return;
  }
  const made = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', other.name], { encoding: 'utf8' });
  if (made.status === 0) {
    other.made = true;
    other.uid = Number(spawnSync('id', ['-u', other.name], { encoding: 'utf8' }).stdout.trim());
  } else {
    // No useradd here: an account with no name is still another account.
    other.uid = 54_321;
  }
});
afterAll(() => {
  if (other.made) spawnSync('userdel', [other.name]);
});

let count = 0;
/** A drop folder as teams have them: everyone may write, the sticky bit set, like /tmp. */
function dropFolder(): string {
  const dir = join(ctx.dir, `drop-${++count}`);
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  return dir;
}

async function clients(dir: string, rows: string[][]): Promise<string> {
  const file = join(dir, 'clients.csv');
  await writeFile(file, stringify([CLIENT_HEADER, ...rows]));
  return file;
}

/** A file of the victim's, somewhere only it can write: what a planted link points at. */
async function victimFile(): Promise<{ path: string; text: string }> {
  const dir = join(ctx.dir, `home-${++count}`, '.ssh');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'authorized_keys');
  const text = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVictimsOwnKey victim@host\n';
  await writeFile(path, text, { mode: 0o644 });
  return { path, text };
}

/** Plants a symbolic link at `at`, owned by the other account where the test may (root). */
function plant(target: string, at: string): void {
  symlinkSync(target, at);
  if (isRoot) lchownSync(at, other.uid, other.uid);
}

describe('outputs never follow a planted link', () => {
  // Each output flag, and the link a planter would put at it (results: to a file not there yet).
  const cases: [string, (drop: string) => { args: string[]; at: string }][] = [
    ['--failed CSV', (drop) => ({ args: ['--failed', join(drop, 'fix-me.csv')], at: join(drop, 'fix-me.csv') })],
    ['--failed workbook', (drop) => ({ args: ['--failed', join(drop, 'fix-me.xlsx')], at: join(drop, 'fix-me.xlsx') })],
    ['the results file', (drop) => ({ args: ['--results', join(drop, 'r.csv')], at: join(drop, 'r.csv') })],
    ['--log-file', (drop) => ({ args: ['--log-file', join(drop, 'run.log')], at: join(drop, 'run.log') })],
    ['--report page', (drop) => ({ args: ['--report', join(drop, 'run.html')], at: join(drop, 'run.html') })],
  ];

  it.each(cases)('%s: refused by name, the target untouched, nothing sent', async (_name, made) => {
    const drop = dropFolder();
    const victim = await victimFile();
    // The planter's key in a row whose name the --failed file would have written.
    const input = await clients(drop, [['ssh-ed25519 AAAAPlanted attacker@host', 'not-an-email', 'DE', 'Street 1', 'EUR', '2024-01-02'], ...validRows(3)]);
    const { args, at } = made(drop);
    plant(victim.path, at);
    const before = ctx.sandbox.store.size;
    const run = await runCliInProcess(['import', input, ...args], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('[output_link]');
    expect(run.stderr).toContain(`${at} is a symbolic link`);
    expect(run.stderr).toContain(`pointing to ${victim.path}`);
    if (isRoot) expect(run.stderr).toContain(`uid ${other.uid}`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(await readFile(victim.path, 'utf8')).toBe(victim.text);
    expect(statSync(victim.path).mode & 0o777).toBe(0o644);
    expect(ctx.sandbox.store.size).toBe(before);
  });

  it('a dangling link at the results path (a file that does not exist yet) is refused too', async () => {
    const drop = dropFolder();
    const input = await clients(drop, validRows(2));
    const target = join(ctx.dir, `not-yet-${++count}`);
    plant(target, `${input}.results.csv`);
    const run = await runCliInProcess(['validate', input], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('[output_link]');
    expect(() => statSync(target)).toThrow();
  });

  it('export --out and its state file: refused before any request', async () => {
    const drop = dropFolder();
    const victim = await victimFile();
    const env = { CCS_BASE_URL: ctx.sandbox.url, CCS_TOKEN: ctx.sandbox.token };
    plant(victim.path, join(drop, 'clients.csv'));
    const out = await runCliInProcess(['export', '--out', join(drop, 'clients.csv'), '--overwrite'], { env });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('[output_link]');
    plant(victim.path, join(drop, 'state.json'));
    const state = await runCliInProcess(['export', '--out', join(drop, 'new.csv'), '--since-last', join(drop, 'state.json')], { env });
    expect(state.code).toBe(2);
    expect(state.stderr).toContain('[output_link]');
    expect(await readFile(victim.path, 'utf8')).toBe(victim.text);
    expect(readdirSync(drop).sort()).toEqual(['clients.csv', 'state.json']);
  });

  it('a log with a second name (hard link) or of another account is never appended to', async () => {
    const drop = dropFolder();
    const input = await clients(drop, validRows(2));
    const mine = join(ctx.dir, `mine-${++count}.log`);
    await writeFile(mine, 'my own log\n', { mode: 0o600 });
    linkSync(mine, join(drop, 'run.log'));
    const linked = await runCliInProcess(['validate', input, '--log-file', join(drop, 'run.log')], {});
    expect(linked.code).toBe(2);
    expect(linked.stderr).toMatch(/has 2 names \(hard links\).*\[output_foreign\]/);
    expect(await readFile(mine, 'utf8')).toBe('my own log\n');
    if (!isRoot) return;
    const theirs = join(drop, 'theirs.log');
    await writeFile(theirs, '');
    await chown(theirs, other.uid, other.uid);
    const foreign = await runCliInProcess(['validate', input, '--log-file', theirs, '--overwrite'], {});
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(new RegExp(`belongs to .*uid ${other.uid}.*\\[output_foreign\\]`));
    expect(await readFile(theirs, 'utf8')).toBe('');
  });

  it("a link at the results file's sidecar (.meta.json) is refused as a link too", async () => {
    const drop = dropFolder();
    const input = await clients(drop, validRows(2));
    const victim = await victimFile();
    plant(victim.path, `${input}.results.csv.meta.json`);
    const run = await runCliInProcess(['validate', input], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('meta.json is a symbolic link');
    expect(run.stderr).toContain('[output_link]');
    expect(await readFile(victim.path, 'utf8')).toBe(victim.text);
  });

  it.runIf(isRoot)("a folder on the way that is another account's link is refused; the user's own links are followed", async () => {
    const drop = dropFolder();
    const input = await clients(drop, validRows(2));
    const elsewhere = join(ctx.dir, `elsewhere-${++count}`);
    mkdirSync(elsewhere);
    plant(elsewhere, join(drop, 'out'));
    const run = await runCliInProcess(['validate', input, '--results', join(drop, 'out', 'r.csv')], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`is reached through .*out, a symbolic link owned by .*uid ${other.uid}.*\\[output_link\\]`));
    expect(readdirSync(elsewhere)).toEqual([]);
    symlinkSync(elsewhere, join(drop, 'mine'));
    const own = await runCliInProcess(['validate', input, '--results', join(drop, 'mine', 'r.csv')], {});
    expect(own.code, own.stderr).toBe(0);
    expect(readdirSync(elsewhere)).toContain('r.csv');
  });

  it("a state file or a results file to resume that is not the user's own is never believed", async () => {
    const drop = dropFolder();
    const env = { CCS_BASE_URL: ctx.sandbox.url, CCS_TOKEN: ctx.sandbox.token };
    // A bound far ahead would make every later night silently empty.
    const ahead = JSON.stringify({ version: 1, bound: '2099-01-01T00:00:00.000Z', near: [], filters: { status: null, creditStatus: null } });
    const mine = join(ctx.dir, `state-${++count}.json`);
    await writeFile(mine, ahead, { mode: 0o600 });
    linkSync(mine, join(drop, 'state.json'));
    const linked = await runCliInProcess(['export', '--out', join(drop, 'a.csv'), '--since-last', join(drop, 'state.json')], { env });
    expect(linked.code).toBe(2);
    expect(linked.stderr).toMatch(/state\.json: it has 2 names .*\[output_foreign\]/);
    if (!isRoot) return;
    const theirs = join(drop, 'theirs.json');
    await writeFile(theirs, ahead);
    await chown(theirs, other.uid, other.uid);
    const foreign = await runCliInProcess(['export', '--out', join(drop, 'b.csv'), '--since-last', theirs], { env });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(new RegExp(`belongs to .*uid ${other.uid}.*\\[output_foreign\\]`));
    const input = await clients(drop, validRows(2));
    const results = join(drop, 'r.csv');
    await writeFile(results, 'row,outcome\n');
    await chown(results, other.uid, other.uid);
    const resumed = await runCliInProcess(['import', input, '--results', results, '--resume'], { env: ctx.env() });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('[output_foreign]');
  });

  it('a --failed file that exists is replaced by a new file, never written into', async () => {
    const drop = dropFolder();
    const input = await clients(drop, [['Ann', 'not-an-email', 'DE', 'Street 1', 'EUR', '2024-01-02']]);
    const failed = join(drop, 'fix-me.csv');
    await writeFile(failed, 'last run\n', { mode: 0o644 });
    // A second name for the old file shows whether its bytes or mode were touched.
    const old = join(ctx.dir, `old-${++count}.csv`);
    linkSync(failed, old);
    const run = await runCliInProcess(['validate', input, '--failed', failed], {});
    expect(run.code).toBe(1);
    expect(await readFile(old, 'utf8')).toBe('last run\n');
    expect(statSync(old).mode & 0o777).toBe(0o644);
    expect(await readFile(failed, 'utf8')).toContain('not-an-email');
    expect(statSync(failed).mode & 0o777).toBe(0o600);
    expect(statSync(failed).ino).not.toBe(statSync(old).ino);
  });
});

describe('a config file found in the current folder', () => {
  const hostile = {
    connection: { proxy: 'http://127.0.0.1:9', caFile: '/dev/null' },
    import: { logFile: 'loot.log' },
    export: { fileMode: '666', escapeFormulas: false, overwrite: true },
  };

  it.runIf(isRoot)("another account's is refused by name, with the fix (as root: a second account plants it)", async () => {
    const drop = dropFolder();
    const input = await clients(drop, validRows(2));
    const config = join(drop, 'ccs-bulk.config.json');
    await writeFile(config, JSON.stringify({ export: { fileMode: '666' } }));
    await chown(config, other.uid, other.uid);
    const run = await runCliInProcess(['validate', input], { cwd: drop });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('[config_untrusted]');
    expect(run.stderr).toMatch(new RegExp(`belongs to .*uid ${other.uid}`));
    expect(run.stderr).toContain('--config FILE');
  });

  it('one that others can write, or in a folder others can write, is refused', async () => {
    const drop = join(ctx.dir, `team-${++count}`);
    mkdirSync(drop);
    const input = await clients(drop, validRows(2));
    const config = join(drop, 'ccs-bulk.config.json');
    await writeFile(config, JSON.stringify({ import: { quiet: true } }));
    await chmod(config, 0o666);
    const writable = await runCliInProcess(['validate', input], { cwd: drop });
    expect(writable.code).toBe(2);
    expect(writable.stderr).toMatch(/others can write it \(mode 666\).*chmod go-w ccs-bulk\.config\.json.*\[config_untrusted\]/);
    await chmod(config, 0o644);
    chmodSync(drop, 0o777);
    const folder = await runCliInProcess(['validate', input], { cwd: drop });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(/others can write its folder \(mode 777\)/);
    chmodSync(drop, 0o755);
    const mine = await runCliInProcess(['validate', input], { cwd: drop });
    expect(mine.code, mine.stderr).toBe(0);
  });

  it('never chooses the proxy, the trusted CAs or a file written; named with --config it may, and every run says which it read', async () => {
    const dir = join(ctx.dir, `project-${++count}`);
    mkdirSync(dir);
    const input = await clients(dir, validRows(2));
    await writeFile(join(dir, 'ccs-bulk.config.json'), JSON.stringify(hostile));
    const found = await runCliInProcess(['import', input], { cwd: dir, env: ctx.env() });
    expect(found.code).toBe(2);
    expect(found.stderr).toContain('connection.proxy, connection.caFile, import.logFile');
    expect(found.stderr).toContain('--config ccs-bulk.config.json');
    expect(found.stderr).toContain('[config_untrusted]');
    // Flags that give those values themselves leave nothing to take from the file.
    await writeFile(join(dir, 'ccs-bulk.config.json'), JSON.stringify({ import: { logFile: 'loot.log', maxErrors: 5 } }));
    const flagged = await runCliInProcess(['validate', input, '--log-file', join(dir, 'mine.log')], { cwd: dir });
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(flagged.stderr).toContain('  config: ccs-bulk.config.json');
    const log = await readFile(join(dir, 'mine.log'), 'utf8');
    expect(log).toContain('"config":"ccs-bulk.config.json"');
    const named = await runCliInProcess(['validate', input, '--config', 'ccs-bulk.config.json', '--overwrite'], { cwd: dir });
    expect(named.code, named.stderr).toBe(0);
    expect(await readFile(join(dir, 'loot.log'), 'utf8')).toContain('"run_started"');
  });
});

describe('files with client data are private', () => {
  it('an export is 0600 whatever the umask, and the summary says who can read it and how to share it', async () => {
    const dir = join(ctx.dir, `exports-${++count}`);
    mkdirSync(dir);
    const env = { CCS_BASE_URL: ctx.sandbox.url, CCS_TOKEN: ctx.sandbox.token };
    const run = await runCli(['export', '--out', join(dir, 'bank.csv')], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(join(dir, 'bank.csv')).mode & 0o777).toBe(0o600);
    expect(run.stderr).toContain('readable by you alone (mode 600: it holds client data); to share it, --file-mode 640');
    const shared = await runCli(['export', '--out', join(dir, 'team.csv'), '--file-mode', '640'], { env });
    expect(shared.code).toBe(0);
    expect(statSync(join(dir, 'team.csv')).mode & 0o777).toBe(0o640);
    expect(shared.stderr).toContain('readable by you and your group (mode 640)');
  });
});
