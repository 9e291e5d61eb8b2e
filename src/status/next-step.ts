/**
 * The one command to run next for a results file, and why: continue a run that stopped or was
 * killed (the command as it was typed, with --resume), import the rows to fix, or nothing.
 * Pure: from what read-status.ts found. The command is the run's own line when its sidecar
 * recorded it (credentials redacted there), run from the folder it ran in.
 */
import { resolve } from 'node:path';
import { resumeCommand, shellQuote } from '../cli/resume-command.js';
import { defaultResultsPath } from '../import/defaults.js';
import { shardResultsPath } from '../import/send/shard.js';
import type { ResultsStatus } from './types.js';

export interface Step {
  next: string | undefined;
  advice: string | undefined;
}

const WHY_STOPPED: Record<string, string> = {
  interrupted: 'it was interrupted (Ctrl-C or SIGTERM): nothing to fix, continue it',
  max_errors: 'the failed rows share a cause: read their error_message in the results file, fix it, then continue',
  auth: 'the service refused the token, the signature or this machine (401/403): fix that (ccs-bulk check), then continue',
  outage: 'the service stayed down past --outage-timeout: once it answers (ccs-bulk check), continue',
  connection: 'the network set-up failed (TLS, DNS, proxy): ccs-bulk check names what to change, then continue',
  input_error: 'the input could not be read where the run said: fix it there, then continue',
  output_error: 'a file could not be written (a full disk?): free space, then continue',
  incomplete_run: 'the run could not account for every row (a fault of ccs-bulk; please report it): continue it',
  systemic_response: 'the same refused answer came back again and again: check --base-url (ccs-bulk check), then continue',
  error: 'the run ended with an error (its output or --log-file said which): fix that, then continue',
};

/** Flags that say how to read and map the input: the rows to fix are read the same way. */
const READING_FLAGS = new Set(['--map', '--date-format', '--encoding', '--delimiter', '--liquidity-type', '--application-date-field', '--identity']);

export function nextStep(status: ResultsStatus, where: { cwd: string | undefined; here: string }): Step {
  const inFolder = (command: string | undefined) =>
    command !== undefined && where.cwd !== undefined && resolve(where.cwd) !== resolve(where.here)
      ? `cd ${shellQuote(where.cwd)} && ${command}`
      : command;
  const step = stepFor(status);
  return { next: inFolder(step.next), advice: step.advice };
}

function stepFor(status: ResultsStatus): Step {
  const { state, counts } = status;
  if (status.backup) return { next: undefined, advice: 'a copy kept when --overwrite replaced the file: for the record, not to continue' };
  if (state === 'in_progress') {
    const by = status.heldBy;
    return { next: undefined, advice: by && `a run holds it now (pid ${by.pid} on ${by.host}, since ${by.since}): wait for it to end, or stop it` };
  }
  const args = runArgs(status);
  if (status.writtenBy === 'validate') return validateStep(status, args);
  const left = (counts.failed ?? 0) + (counts.invalid ?? 0);
  const unsent = counts.not_attempted ?? 0;
  if (status.service?.startsWith('in-process sandbox') && state !== 'finished') {
    return {
      next: args && command([...without(args, ['--resume', '--overwrite']), '--overwrite']),
      advice: 'a rehearsal against an in-process sandbox, gone with its run: it cannot be continued, only run again',
    };
  }
  if (state === 'killed') {
    return { next: args && resumeCommand(args), advice: 'the run was killed (kill -9, a crash, a power cut) before it recorded its end: continue it; rows created before are skipped' };
  }
  if (state === 'stopped') {
    const why = status.stop?.reason;
    return { next: args && resumeCommand(args), advice: (why && WHY_STOPPED[why]) ?? `it stopped (${why ?? 'reason not recorded'}): continue it` };
  }
  if (state === 'unknown') {
    if (unsent + left === 0) return { next: undefined, advice: 'its sidecar records no end (written by an older ccs-bulk, or missing): nothing in it is left to send' };
    return { next: args && resumeCommand(args), advice: `its sidecar records no end (written by an older ccs-bulk, or missing): ${unsent + left} rows not created yet` };
  }
  if (unsent > 0) return { next: args && resumeCommand(args), advice: `${unsent} rows were not attempted: continue it` };
  if (left === 0) return { next: undefined, advice: undefined };
  return fixStep(status, args, left);
}

/** A finished import with rows to fix: import its --failed file once fixed, or send them again with one. */
function fixStep(status: ResultsStatus, args: string[] | undefined, left: number): Step {
  const rows = `${left} row${left === 1 ? '' : 's'} failed or invalid`;
  const failed = args && flagValue(args, '--failed');
  if (args !== undefined && failed !== undefined) {
    const shard = /\.shard-(\d+)-of-(\d+)/.exec(status.results);
    const file = shard ? shardResultsPath(failed, { index: Number(shard[1]), count: Number(shard[2]) }) : failed;
    return {
      next: command(['import', file, ...readingFlags(args)]),
      advice: `${rows}: they are in ${file} (its error column says why): fix them there, then import that file`,
    };
  }
  const input = status.source?.path;
  if (args === undefined || input === undefined) return { next: undefined, advice: `${rows}: their error_message in the results file says why` };
  const toFix = `${input}.failed.csv`;
  return {
    next: resumeCommand([...args, '--failed', toFix]),
    advice: `${rows}: this sends the failed ones again and writes every row still to fix to ${toFix} (its error column says why)`,
  };
}

function validateStep(status: ResultsStatus, args: string[] | undefined): Step {
  const invalid = status.counts.invalid ?? 0;
  const again = args && command(without(args, ['--resume', '--overwrite']));
  if (status.state !== 'finished') return { next: again, advice: 'a dry run that did not finish: run it again (nothing was sent)' };
  if (invalid > 0) return { next: again, advice: `a dry run: ${invalid} invalid rows (their error_message says why): fix them in the input, then validate again` };
  // A dry run given its own --results sits beside an import's file: that file says what comes next.
  if (args === undefined || flagValue(args, '--results') !== undefined) return { next: undefined, advice: 'a dry run: every row valid, nothing sent' };
  const importArgs = without(args, ['--dry-run', '--resume', '--overwrite']);
  importArgs[0] = 'import';
  return { next: command(importArgs), advice: 'a dry run: every row valid, nothing sent yet' };
}

/**
 * The run's arguments from `import` or `validate` on: as recorded (after the program's name,
 * whichever way it was called), or else rebuilt from the files' names.
 */
function runArgs(status: ResultsStatus): string[] | undefined {
  const words = status.commandLine;
  const at = words?.slice(0, 3).findIndex((word) => word === 'import' || word === 'validate') ?? -1;
  if (words !== undefined && at >= 0) return words.slice(at);
  const input = status.source?.path;
  if (input === undefined) return undefined;
  const args = [status.writtenBy === 'validate' ? 'validate' : 'import', input];
  const shard = /\.shard-(\d+)-of-(\d+)/.exec(status.results);
  const whole = shard ? status.results.replace(shard[0], '') : status.results;
  if (resolve(whole) !== resolve(defaultResultsPath(input)) && resolve(whole) !== resolve(defaultResultsPath(input, true))) args.push('--results', whole);
  if (shard) args.push('--shard', `${shard[1]}/${shard[2]}`);
  if (status.service?.startsWith('in-process sandbox')) args.push('--sandbox');
  return args;
}

function command(args: readonly string[]): string {
  return ['ccs-bulk', ...args].map(shellQuote).join(' ');
}

/** The arguments without these flags (boolean flags: they take no value). */
function without(args: readonly string[], flags: readonly string[]): string[] {
  return args.filter((arg) => !flags.includes(arg));
}

/** A flag's value, `--flag value` or `--flag=value`. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i]!.startsWith(`${flag}=`)) return args[i]!.slice(flag.length + 1);
  }
  return undefined;
}

function readingFlags(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.split('=')[0]!;
    if (!READING_FLAGS.has(name)) continue;
    kept.push(arg);
    if (!arg.includes('=') && args[i + 1] !== undefined) kept.push(args[++i]!);
  }
  return kept;
}
