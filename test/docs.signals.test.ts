/**
 * Signals reach the run, as the docs run it. Every line a scheduler hands to `sh -c` that starts
 * ccs-bulk (a crontab line, the shell loop's remote command over ssh) `exec`s it, so the shell's
 * pid — the one a scheduler signals — becomes the import's; the Kubernetes manifests run
 * ccs-bulk without a shell (the image's entrypoint). Then, read out of docs/scale-out.md, the
 * Indexed Job's container and the shell loop's remote line run against a sandbox behind a gate,
 * get SIGTERM on the process the scheduler would signal while rows are held mid-flight, and
 * must stop cleanly: exit 3, the way to continue printed, the lock released; the resume the docs
 * give creates every row of the shard exactly once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { startGate } from './gate.helpers.js';
import { BIN, CLIENT_HEADER, readResults, ROOT, useSandbox, validRows } from './helpers.js';

const SCALE_OUT = readFileSync(join(ROOT, 'docs', 'scale-out.md'), 'utf8');
const SCHEDULED = readFileSync(join(ROOT, 'docs', 'scheduled-reports.md'), 'utf8');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ROWS = 60;

/** The fenced blocks of a language in a piece of Markdown. */
const blocks = (markdown: string, language: string): string[] =>
  [...markdown.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);

/** A crontab line's command (the five schedule fields dropped), in cron blocks and in sh blocks showing a crontab. */
const cronCommands = (markdown: string): string[] =>
  [...blocks(markdown, 'cron'), ...blocks(markdown, 'sh')]
    .flatMap((block) => block.split('\n'))
    .map((line) => /^(?:[\d*,/-]+\s+){5}(.*ccs-bulk.*)$/.exec(line)?.[1])
    .filter((command): command is string => command !== undefined);

/** The shell loop's remote command: the double-quoted word after `ssh "$host"`, as the local shell reads it (continuations joined). */
const SSH_REMOTE = /ssh "\$host" "((?:[^"\\]|\\[\s\S])*)" &/.exec(blocks(SCALE_OUT, 'sh').find((block) => block.includes('ssh "$host"')) ?? '')?.[1];

/** The Indexed Job's manifest and its container's argv after the entrypoint (`args: [a, b, "c"]`). */
const JOB = blocks(SCALE_OUT, 'yaml').find((block) => block.includes('kind: Job'))!;
const JOB_ARGS = /^\s+args: \[(.*)\]$/m.exec(JOB)?.[1]?.split(',').map((word) => word.trim().replace(/^"(.*)"$/, '$1'));

describe('every documented line a scheduler runs through sh -c execs ccs-bulk', () => {
  const lines = [
    ...cronCommands(SCALE_OUT).map((line) => ['docs/scale-out.md crontab', line] as const),
    ...cronCommands(SCHEDULED).map((line) => ['docs/scheduled-reports.md crontab', line] as const),
    ...cronCommands(README).map((line) => ['README.md crontab', line] as const),
    ['docs/scale-out.md ssh remote command', SSH_REMOTE ?? ''] as const,
  ];

  it('finds them', () => {
    expect(SSH_REMOTE).toBeDefined();
    expect(cronCommands(SCHEDULED).length).toBeGreaterThanOrEqual(4);
  });

  // The last command of the line (after `cd … &&`), past its VAR=value words, is `exec ccs-bulk`.
  it.each(lines)('%s: %s', (_where, line) => {
    const last = line.replace(/\\\n\s*/g, ' ').split(/&&|;/).at(-1)!.trim();
    const words = last.replace(/^(?:\w+=(?:"[^"]*"|'[^']*'|\\\$\([^)]*\)|\$\([^)]*\)|\S)*\s+)*/, '');
    expect(words).toMatch(/^exec (?:npx )?ccs-bulk /);
  });

  it('the Kubernetes containers run ccs-bulk itself: no command, so the image\'s entrypoint; no shell in between', () => {
    for (const manifest of [JOB, ...blocks(SCHEDULED, 'yaml').filter((block) => block.includes('kind: CronJob'))]) {
      expect(manifest).not.toMatch(/^\s+command:/m);
      expect(manifest).toMatch(/^\s+args:/m);
    }
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^ENTRYPOINT \["ccs-bulk"\]$/m);
  });
});

const ctx = useSandbox({ latencyMs: 5 });
let data: string;
let secure: string;
let bin: string;

beforeAll(async () => {
  data = join(ctx.dir, 'data');
  secure = join(ctx.dir, 'secure');
  bin = join(ctx.dir, 'bin');
  await Promise.all([mkdir(data), mkdir(secure), mkdir(bin)]);
  await writeFile(join(data, 'clients.csv'), stringify([CLIENT_HEADER, ...validRows(ROWS, 90_000)]));
  await writeFile(join(secure, 'private.pem'), readFileSync(ctx.keyFile), { mode: 0o600 });
  await writeFile(join(secure, 'token'), `${ctx.sandbox.token}\n`, { mode: 0o600 });
  // `ccs-bulk` on PATH, as the image and a worker have it (exec: one process, no shell left over).
  await writeFile(join(bin, 'ccs-bulk'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, { mode: 0o755 });
});

interface Stopped {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Starts `argv(gate's URL)` with creates held at a gate after `through`, sends SIGTERM to the
 * process itself (the shell, for a `sh -c` line) once rows are held, then lets the held rows
 * finish. The gate stays for the resume: a results file names the service it was written against.
 */
async function terminateMidRun(
  argv: (url: string) => string[],
  env: Record<string, string>,
  through: number,
): Promise<Stopped & { gateUrl: string; stop(): Promise<void> }> {
  const gate = await startGate(ctx.sandbox.url);
  gate.close(through);
  const command = argv(gate.url);
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: data,
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: ctx.dir, ...env, CCS_BASE_URL: gate.url },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 60_000;
  while (gate.held === 0) {
    if (Date.now() > deadline) throw new Error(`no create was held: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  child.kill('SIGTERM');
  gate.open();
  const { code, signal } = await closed;
  return { code, signal, stderr, gateUrl: gate.url, stop: () => gate.stop() };
}

/** Every row of the shard created once: its results hold each row once, all created; the service one client per row. */
async function expectShardCreatedOnce(results: string, before: number): Promise<void> {
  const lines = await readResults(results);
  expect(new Set(lines.map((line) => line[0])).size).toBe(lines.length);
  expect(lines.every((line) => line[1] === 'created')).toBe(true);
  expect(lines.length).toBeGreaterThan(ROWS / 3 - 10);
  expect(ctx.sandbox.store.size - before).toBe(lines.length);
  const emails = ctx.sandbox.store.all().map((client) => client.email);
  expect(new Set(emails).size).toBe(emails.length);
}

describe('SIGTERM as a scheduler sends it', () => {
  it("the Indexed Job's container (the entrypoint and its args, no shell): stops cleanly; the Job's restart of the pod finishes the shard", async () => {
    expect(JOB_ARGS?.slice(0, 2)).toEqual(['import', 'clients.csv']);
    const env = { CCS_TOKEN: ctx.sandbox.token, CCS_SIGNING_KEY_FILE: join(secure, 'private.pem'), JOB_COMPLETION_INDEX: '1' };
    const before = ctx.sandbox.store.size;
    const argv = ['ccs-bulk', ...JOB_ARGS!];
    const stopped = await terminateMidRun(() => argv, env, 5);
    try {
      expect(stopped.signal, stopped.stderr).toBeNull();
      expect(stopped.code, stopped.stderr).toBe(3);
      expect(stopped.stderr).toMatch(/to continue: .*--resume/);
      const results = join(data, 'clients.csv.results.shard-2-of-3.csv');
      expect(existsSync(`${results}.lock`)).toBe(false);
      // The pod started again: the same container, the same index.
      const done = await spawnRun(argv, { ...env, CCS_BASE_URL: stopped.gateUrl });
      expect(done.code, done.stderr).toBe(0);
      await expectShardCreatedOnce(results, before);
    } finally {
      await stopped.stop();
    }
  }, 120_000);

  it("the shell loop's remote line under sh -c, the shell signalled: stops cleanly; its line with --resume finishes the shard", async () => {
    // The local shell expands the loop's variables; the remote one gets the line (paths moved into the test's folders).
    const local = await spawnRun(['sh', '-c', `i=1; N=3; printf '%s' "${SSH_REMOTE!}"`], { CCS_BASE_URL: '@URL@' });
    const remote = local.stdout.replaceAll('/data', data).replaceAll('/secure', secure);
    expect(remote).toMatch(/^cd \S+ && CCS_BASE_URL=@URL@ .* exec ccs-bulk import clients\.csv --shard 1\/3 --quiet$/);
    const before = ctx.sandbox.store.size;
    const gated = (url: string) => remote.replace('@URL@', url);
    const stopped = await terminateMidRun((url) => ['sh', '-c', gated(url)], {}, 5);
    try {
      expect(stopped.signal, stopped.stderr).toBeNull();
      expect(stopped.code, stopped.stderr).toBe(3);
      // --quiet still says why it stopped and how to go on.
      expect(stopped.stderr).toMatch(/stopped.*to continue: .*--resume/);
      const results = join(data, 'clients.csv.results.shard-1-of-3.csv');
      expect(existsSync(`${results}.lock`)).toBe(false);
      const resumed = await spawnRun(['sh', '-c', `${gated(stopped.gateUrl)} --resume`], {});
      expect(resumed.code, resumed.stderr).toBe(0);
      await expectShardCreatedOnce(results, before);
    } finally {
      await stopped.stop();
    }
  }, 120_000);
});

function spawnRun(argv: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: data, env: { PATH: `${bin}:/usr/bin:/bin`, HOME: ctx.dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
