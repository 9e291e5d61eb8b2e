/**
 * Shared test plumbing: temp dirs, the CLI in this process or as a child process, sandbox key
 * files.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { format } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../src/sandbox/index.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'dist', 'bin.cjs');

export async function makeTempDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ccs-bulk-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
  input?: string;
}

/** This process's environment without CCS_* (none leaking in), plus `extra` (undefined removes). */
export function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('CCS_') && value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/**
 * Runs `node dist/bin.cjs ...args` with a clean environment (no CCS_* leaking in). For tests where
 * the process is the point: signals, exit codes set by main(), locks held by another pid,
 * stdout as a pipe, privileges. Anything else: runCliInProcess, ten times cheaper.
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const env = cliEnv(options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env, stdio: 'pipe' });
    const output = collectOutput(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: output.stdout, stderr: output.stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/**
 * The CLI in this process: src/cli/cli.ts's runCli with its io captured, and a thrown error turned
 * into the exit code and the one stderr line, as main() does (same environment as runCli, and
 * `cwd` by chdir, which vitest's forks pool allows; overlapping runs must share it). What
 * stays out: bin.cjs's thread-pool size and V8 flag, signals, process.exit, and yargs' --help,
 * --version and completion output, which it prints with console.log (captured here as stdout).
 */
export async function runCliInProcess(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const [{ runCli: run }, { isCcsError }, { redactSecrets }] = await Promise.all([
    import('../src/cli/cli.js'),
    import('../src/errors.js'),
    import('../src/infra/redact.js'),
  ]);
  if (options.input !== undefined) throw new Error('runCliInProcess has no stdin: use runCli');
  const env = cliEnv(options.env);
  // Node reads these when a process starts, yargs' completion reads $SHELL from the process: a
  // run that sets them needs a process of its own.
  for (const name of ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'UV_THREADPOOL_SIZE', 'SHELL']) {
    if (env[name] !== process.env[name]) throw new Error(`${name} takes effect at a process's start: use runCli`);
  }
  const stdout = capture();
  const stderr = capture();
  const cwd = options.cwd ?? ROOT;
  // Runs may overlap (two shards at once): they share the process's directory and console.
  if (active.runs > 0 && cwd !== active.cwd) throw new Error('overlapping in-process runs need the same cwd');
  if (active.runs++ === 0) {
    active.cwd = cwd;
    active.savedCwd = process.cwd();
    process.chdir(cwd);
  }
  const restore = captureConsole(stdout.stream, stderr.stream);
  let code: number;
  try {
    code = await withDeadline(run(args, env, { stdout: stdout.stream, stderr: stderr.stream }), options.timeoutMs);
  } catch (error) {
    if (!isCcsError(error)) throw error;
    stderr.stream.write(`ccs-bulk: error: ${redactSecrets(error.message)} [${error.code}]\n`);
    code = error.exitCode;
  } finally {
    restore();
    if (--active.runs === 0) process.chdir(active.savedCwd);
  }
  return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
}

const active = { runs: 0, cwd: '', savedCwd: '' };

/** A writable that keeps what it is given (not a TTY: no progress bar, no colours). */
function capture(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

const CONSOLE = { log: console.log, info: console.info, error: console.error, warn: console.warn };
const consoleTargets: { stdout: Writable; stderr: Writable }[] = [];

/**
 * yargs prints help, version, completion and its own messages with console: to the captured io
 * (of the latest run, when runs overlap), until the last run ends.
 */
function captureConsole(stdout: Writable, stderr: Writable): () => void {
  const target = { stdout, stderr };
  consoleTargets.push(target);
  const line =
    (pick: 'stdout' | 'stderr') =>
    (...values: unknown[]) =>
      void consoleTargets.at(-1)![pick].write(`${format(...values)}\n`);
  Object.assign(console, { log: line('stdout'), info: line('stdout'), error: line('stderr'), warn: line('stderr') });
  return () => {
    consoleTargets.splice(consoleTargets.indexOf(target), 1);
    if (consoleTargets.length === 0) Object.assign(console, CONSOLE);
  };
}

/** A run that outlives `ms` fails its test (a child process would be killed at that point). */
async function withDeadline<T>(work: Promise<T>, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the CLI still ran after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A child's stdout and stderr as text, growing as it writes. */
export function collectOutput(child: ChildProcessWithoutNullStreams): { stdout: string; stderr: string } {
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
  });
  return output;
}

/** Writes the sandbox's private key where the CLI can read it (mode 0600, as a user would). */
export async function writeKeyFile(dir: string, pem: string | undefined): Promise<string> {
  if (pem === undefined) throw new Error('sandbox has no private key');
  const path = join(dir, 'private.pem');
  await writeFile(path, pem, { mode: 0o600 });
  return path;
}

/** Environment that points the CLI at a sandbox. */
export function sandboxEnv(sandbox: { url: string; token: string }, keyFile: string): Record<string, string> {
  return { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token, CCS_SIGNING_KEY_FILE: keyFile };
}

/** A CSV of `count` valid, distinct client rows (deterministic), with the given header. */
export function validRows(count: number, start = 1): string[][] {
  return Array.from({ length: count }, (_, i) => {
    const n = start + i;
    return [
      `Client ${n}, Ltd`,
      `client${n}@example.com`,
      n % 2 ? 'DE' : 'France',
      `Street ${n}\nTown ${n}`,
      'EUR',
      '2024-05-17',
    ];
  });
}

export const CLIENT_HEADER = ['name', 'email', 'country', 'address', 'currency', 'application_date'];

export async function readResults(path: string): Promise<string[][]> {
  const { parse } = await import('csv-parse/sync');
  const { readFile } = await import('node:fs/promises');
  return (parse(await readFile(path), { relax_column_count: true }) as string[][]).slice(1);
}

/**
 * startSandbox with the run's shared key pair (test/global-setup.ts) instead of a fresh one, unless
 * the options name a key or turn signatures off: `privateKeyPem` is set as if it had made it.
 */
export async function startTestSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  if (options.publicKeyPem !== undefined || options.verifySignatures === false) return startSandbox(options);
  const keys = inject('signingKeys');
  const sandbox = await startSandbox({ ...options, publicKeyPem: keys.publicKeyPem });
  sandbox.privateKeyPem = keys.privateKeyPem;
  return sandbox;
}

/** A key pair the test sandboxes do not know (made once per run). */
export function otherKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  return inject('otherSigningKeys');
}

export interface SandboxContext {
  sandbox: Sandbox;
  dir: string;
  keyFile: string;
  /** Environment pointing the CLI at this sandbox. */
  env(): Record<string, string>;
}

/**
 * Per test file: a sandbox on port 0, a temp dir, and the sandbox's private key written where
 * the CLI reads it; all stopped and removed after the file's tests.
 */
export function useSandbox(options: SandboxOptions = {}): SandboxContext {
  const context = {} as SandboxContext;
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    context.sandbox = await startTestSandbox(options);
    const temp = await makeTempDir();
    cleanup = temp.cleanup;
    context.dir = temp.dir;
    context.keyFile = await writeKeyFile(temp.dir, context.sandbox.privateKeyPem);
    context.env = () => sandboxEnv(context.sandbox, context.keyFile);
  });
  afterAll(async () => {
    await context.sandbox?.close();
    await cleanup?.();
  });
  return context;
}

/**
 * A log that must hold no secret and no personal data: nothing shaped like a token, a key or
 * an auth header, and none of `values` (tokens, passwords, names, e-mails, keys…).
 */
export function expectNoneOf(text: string, values: Iterable<string>): void {
  expect(text).not.toMatch(/PRIVATE KEY|lk_sandbox_|lk_live_|authorization|bearer/i);
  const found = [...values].filter((value) => value.length > 3 && text.includes(value));
  expect(found).toEqual([]);
}

/**
 * The `NAME=value` assignments of shell lines as a POSIX shell reads them: a value may be
 * single-quoted (`'…'`, `'\''` for a quote), as the product prints a path with a space.
 */
export function shellAssignments(text: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [, name, word] of text.matchAll(/(\w+)=((?:'[^']*'|\\.|[^\s'\\])+)/g)) found[name!] = shellUnquote(word!);
  return found;
}

/** One shell word without its quoting: `'a b'\''c'` → `a b'c`. */
export function shellUnquote(word: string): string {
  return word.replace(/'([^']*)'|\\(.)/g, (_, quoted: string | undefined, escaped: string | undefined) => quoted ?? escaped ?? '');
}

/** A command line split into its words as a POSIX shell would (single quotes and backslashes). */
export function shellWords(line: string): string[] {
  return [...line.matchAll(/(?:'[^']*'|\\.|[^\s'\\])+/g)].map(([word]) => shellUnquote(word));
}

/** Polls a condition every 10 ms until it holds: a child's progress is an event on disk or at a gate. */
export async function until(condition: () => Promise<boolean> | boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
