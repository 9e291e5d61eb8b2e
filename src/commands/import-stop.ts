/**
 * How an import that did not simply succeed says so: its exit code (rows no retry can fix may
 * be accepted), the one line --quiet still prints, the --json object's failure fields, and the
 * words a second Ctrl-C prints before the process exits.
 */
import type { ExitCode } from '../errors.js';
import type { ImportSummary } from '../import/run-import.js';
import type { ImportOptions } from '../config/options.js';
import type { ProgressSnapshot } from '../infra/progress-report.js';
import { shownPath } from '../infra/printable.js';
import { counted } from '../cli/progress.js';
import { resumeCommand } from '../cli/resume-command.js';

/** The command that continues this import: the command as typed, its shard named as `--shard K/N`. */
export function resumeCommandOf(options: ImportOptions): string {
  return resumeCommand(options.commandLine, options.run.shard);
}

/**
 * 0 all done, 1 rows invalid or failed, 2 the input or the connection, 3 stopped. With
 * `acceptFailed`, rows only a fix of the row helps (invalid, refused by the service for what they
 * hold) are no reason for 1: every other row has its outcome, and they are in the failed file.
 */
export function exitCodeOf(summary: ImportSummary, acceptFailed = false): ExitCode {
  if (summary.stopped?.reason === 'input_error' || summary.stopped?.reason === 'connection') return 2;
  if (summary.stopped) return 3;
  if (summary.counts.invalid + summary.counts.failed === 0) return 0;
  return acceptFailed && accepts(summary) ? 0 : 1;
}

/** Every row that is not in the service either needs a fix of its own (invalid, refused), or was never sent (none left). */
function accepts(summary: ImportSummary): boolean {
  const { counts } = summary;
  return counts.failed === summary.refused && counts.not_attempted === 0;
}

/** Rows `acceptFailed` let through with exit 0 (0 when it did not apply). */
export function acceptedRows(summary: ImportSummary, exitCode: ExitCode): number {
  return exitCode === 0 ? summary.counts.invalid + summary.counts.failed : 0;
}

/** `1 row not imported (1 invalid, 0 refused by the service), accepted by --accept-failed-rows: in fix-me.csv`. */
export function acceptedWords(summary: ImportSummary): string {
  const { counts } = summary;
  const where = summary.failed !== undefined ? shownPath(summary.failed) : `${shownPath(summary.results)} (add --failed FILE for a file of them)`;
  return (
    `${counted(counts.invalid + counts.failed, 'row')} not imported (${counts.invalid} invalid, ${summary.refused} refused by the service), ` +
    `accepted by --accept-failed-rows: fix them in ${where}`
  );
}

/** The outcome counts as the summary's headline lists them: `439 created, 0 failed, …, 1061 not attempted`. */
export function countWords(counts: Readonly<Record<string, number>>, dryRun: boolean): string {
  const order = dryRun ? ['valid', 'invalid', 'duplicate', 'existing'] : ['created', 'existing', 'failed', 'invalid', 'duplicate', 'skipped', 'not_attempted'];
  return order
    .filter((outcome) => (counts[outcome] ?? 0) > 0 || ['created', 'valid', 'failed', 'invalid', 'duplicate'].includes(outcome))
    .map((outcome) => `${counts[outcome] ?? 0} ${outcome.replace('_', ' ')}`)
    .join(', ');
}

/** The code and message of a run that ended non-zero (a stop's own, else `rows_failed`). */
export function failureOf(summary: ImportSummary): { code: string; message: string } {
  if (summary.stopped) return { code: summary.stopped.code, message: summary.stopped.message };
  const { counts } = summary;
  return {
    code: 'rows_failed',
    message: `${counted(counts.invalid + counts.failed, 'row')} not imported: ${counts.invalid} invalid, ${counts.failed} failed`,
  };
}

/** Failed rows a resume sends again: any but those refused for what they hold. */
function resendable(summary: ImportSummary): boolean {
  return summary.stopped !== undefined || summary.counts.failed > summary.refused;
}

/** --json: the summary, with whether it succeeded, its exit code, and for a failure its code, message and resume command. */
export function jsonSummary(summary: ImportSummary, exitCode: ExitCode, resume: string | undefined): object {
  const accepted = acceptedRows(summary, exitCode);
  return {
    ...summary,
    ok: exitCode === 0,
    exitCode,
    ...(exitCode !== 0 && { ...failureOf(summary), resumeCommand: resendable(summary) ? resume : undefined }),
    ...(accepted > 0 && { acceptedFailedRows: accepted }),
  };
}

/** --quiet's one line on a non-zero exit or a stop: the code, the counts and the way back. */
export function quietLine(summary: ImportSummary, exitCode: ExitCode, resume: string | undefined): string {
  const { code } = failureOf(summary);
  const what = summary.stopped ? `stopped (${code})` : `finished with rows not imported (${code})`;
  const next =
    resume !== undefined && resendable(summary)
      ? `; to continue: ${resume}`
      : summary.failed !== undefined
        ? `; rows to fix: ${shownPath(summary.failed)}`
        : `; rows to fix: see ${shownPath(summary.results)}`;
  // The reason first (the summary's cause line, which --quiet hides), unless the person knows it: they stopped it.
  const cause =
    summary.stopped && summary.stopped.code !== 'interrupted'
      ? `ccs-bulk: ${summary.stopped.message.replace(/\s*\n\s*/g, ' ')} [${code}]\n`
      : '';
  return `${cause}ccs-bulk: ${summary.dryRun ? 'validate' : 'import'} ${what}, exit ${exitCode}: ${countWords(summary.counts, summary.dryRun)}${next}\n`;
}

/**
 * A second Ctrl-C: what the run had done at that moment (its last snapshot: taken as each row
 * finished), every row read in one count, and the way back. Rows read without an outcome were
 * in flight or waiting: the results file has no line for them, and --resume sends them again
 * under the same keys.
 */
export function stopNowWords(snapshot: ProgressSnapshot | undefined, resume: string): string {
  const lines: string[] = [];
  if (snapshot !== undefined) {
    const read = snapshot.read ?? snapshot.done;
    const unfinished = Math.max(0, read - snapshot.done);
    // The reader had not given its last row: the rest of the file has no count yet.
    const rest = snapshot.total === undefined ? '; the rest of the file not read yet: --resume reads it' : '';
    lines.push(
      `Stopped at once after ${counted(read, 'row')} read: ${countWords(snapshot.counters, false)}${rest}`,
      `  ${unfinished} in flight when stopped: --resume sends them again with their keys`,
      `  account: ${read} rows read, ${snapshot.done} outcomes recorded; the results file has no line for the rest`,
    );
  }
  lines.push(`  to continue: ${resume}`);
  return `${lines.join('\n')}\n`;
}
