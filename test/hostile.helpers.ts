/** Shared by the hostile-input and hostile-server tests: the CLI with its peak memory measured. */
import { spawn } from 'node:child_process';
import { BIN, type CliOptions, type CliResult, cliEnv, collectOutput, ROOT } from './helpers.js';

export interface MeasuredResult extends CliResult {
  /** The child's peak resident set size (GNU time %M), in MiB. */
  peakRssMiB: number;
  elapsedMs: number;
}

/** The RSS every hostile case must stay under. */
export const RSS_LIMIT_MIB = 300;

const MARK = 'ccs-bulk-peak-rss-kb ';

/** Like runCli, through /usr/bin/time so the peak RSS of the whole run is known. */
export function runCliMeasured(
  args: string[],
  options: CliOptions & { uid?: number; gid?: number } = {},
): Promise<MeasuredResult> {
  const env = cliEnv(options.env);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', `${MARK}%M`, process.execPath, BIN, ...args], {
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
