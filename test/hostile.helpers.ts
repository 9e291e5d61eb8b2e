/** Shared by the hostile-input and hostile-server tests: the CLI with its peak memory measured. */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, type CliOptions, type CliResult, cliEnv, collectOutput, ROOT, runCliInProcess } from './helpers.js';

export interface MeasuredResult extends CliResult {
  /** The child's peak resident set size (GNU time %M), in MiB. */
  peakRssMiB: number;
  elapsedMs: number;
}

/** The RSS every hostile case must stay under. */
export const RSS_LIMIT_MIB = 300;

/**
 * What a run in this process may add to its peak RSS: RSS_LIMIT_MIB less what a child CLI
 * holds before it has read a byte (about 90 MiB: node and the CLI's modules).
 */
export const RSS_GROWTH_LIMIT_MIB = RSS_LIMIT_MIB - 100;

export interface InProcessMeasuredResult extends CliResult {
  /** How far the run raised this process's peak RSS above its RSS at the start, in MiB. */
  rssGrowthMiB: number;
  elapsedMs: number;
}

/**
 * The CLI in this process (runCliInProcess), with the most its run added to this process's
 * RSS: the kernel's high-water mark is reset to the current RSS before the run (writing 5 to
 * /proc/self/clear_refs) and read after it. For small inputs, where starting a child is most
 * of a case's cost; memory the worker already holds and reuses is not seen, so cases whose memory
 * is the point run as a child. Undefined where the mark cannot be reset: the caller runs a child.
 */
export async function runCliInProcessMeasured(args: string[], options: CliOptions = {}): Promise<InProcessMeasuredResult | undefined> {
  const status = () => readFileSync('/proc/self/status', 'utf8');
  const kib = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    return undefined;
  }
  const reset = status();
  const rss = kib(reset, 'VmRSS');
  // A kernel that took the write but kept the mark: a child measures instead.
  if (!(kib(reset, 'VmHWM') - rss < 8 * 1024)) return undefined;
  const started = Date.now();
  const run = await runCliInProcess(args, options);
  const peak = kib(status(), 'VmHWM');
  return { ...run, rssGrowthMiB: (peak - rss) / 1024, elapsedMs: Date.now() - started };
}

const MARK = 'ccs-bulk-peak-rss-kb ';

/** Like runCli, through /usr/bin/time so the peak RSS of the whole run is known. */
export function runCliMeasured(
  args: string[],
  options: CliOptions & { uid?: number; gid?: number; bin?: string } = {},
): Promise<MeasuredResult> {
  const env = cliEnv(options.env);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', `${MARK}%M`, process.execPath, options.bin ?? BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: 'pipe',
      detached: true,
      ...(options.uid !== undefined && { uid: options.uid }),
      ...(options.gid !== undefined && { gid: options.gid }),
    });
    const output = collectOutput(child);
    // Killing time(1) would leave the CLI running: the whole process group goes.
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const { stdout } = output;
      let { stderr } = output;
      const at = stderr.lastIndexOf(MARK);
      const kb = at >= 0 ? Number(stderr.slice(at + MARK.length).trim()) : Number.NaN;
      if (at >= 0) stderr = stderr.slice(0, at);
      // time(1) reports a signal-killed child as "Command terminated by signal N".
      stderr = stderr.replace(/Command (terminated by signal|exited with non-zero status) \d+\n$/, '');
      resolve({ code, signal, stdout, stderr, peakRssMiB: kb / 1024, elapsedMs: Date.now() - started });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Where another user (the permission case's) runs the CLI from, or why it cannot. */
export type OtherUserCli = { bin: string; base: string } | { skip: string };

const otherUserClis = new Map<number, OtherUserCli>();

/**
 * The built CLI as `uid` can run it, and a directory that user can reach to hold its input: the
 * checkout itself when the user may enter it, else a copy of dist/ and the runtime packages in
 * a world-searchable place (a checkout under a 0700 directory, as root's often is, cannot be
 * entered). A skip names what this machine lacks: the right to switch users, or any such place.
 */
export function cliForUser(uid: number, gid: number): OtherUserCli {
  let found = otherUserClis.get(uid);
  if (found === undefined) {
    found = findCliForUser(uid, gid);
    otherUserClis.set(uid, found);
  }
  return found;
}

/** Removes the directories (and copies) cliForUser made. */
export function removeUserClis(): void {
  for (const cli of otherUserClis.values()) {
    if ('base' in cli) rmSync(cli.base, { recursive: true, force: true });
  }
  otherUserClis.clear();
}

function findCliForUser(uid: number, gid: number): OtherUserCli {
  const runs = (bin: string, cwd: string) =>
    spawnSync(process.execPath, [bin, '--version'], { uid, gid, cwd, stdio: 'pipe', timeout: 30_000 });
  const places = [...new Set([tmpdir(), '/tmp', '/var/tmp', '/dev/shm'])].filter((place) => existsSync(place));
  const failures: string[] = [];
  for (const place of places) {
    const base = mkdtempSync(join(place, 'ccs-bulk-other-user-'));
    chmodSync(base, 0o755);
    const direct = runs(BIN, base);
    if (direct.error?.message.includes('EPERM')) {
      rmSync(base, { recursive: true, force: true });
      return { skip: `cannot run a process as uid ${uid} here (${direct.error.message})` };
    }
    if (direct.status === 0) return { bin: BIN, base };
    copyRuntime(join(base, 'ccs-bulk'));
    const copy = join(base, 'ccs-bulk', 'dist', 'bin.cjs');
    const run = runs(copy, base);
    if (run.status === 0) return { bin: copy, base };
    failures.push(`${place}: ${String(run.stderr).trim().split('\n')[0] ?? run.error?.message}`);
    rmSync(base, { recursive: true, force: true });
  }
  return { skip: `uid ${uid} can reach no copy of the CLI (${failures.join('; ') || 'no temp directory'})` };
}

/** dist/, package.json and the runtime packages (not the dev ones, per package-lock.json). */
function copyRuntime(to: string): void {
  cpSync(join(ROOT, 'dist'), join(to, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(to, 'package.json'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; link?: boolean }>;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev === true || !existsSync(join(ROOT, path))) continue;
    cpSync(join(ROOT, path), join(to, path), { recursive: true });
  }
}
