/**
 * The import's and validate's closing lines on stderr: what happened to the rows, which rows
 * are wrong and why, what was changed on the way out, where the files are, and — for a run that
 * stopped — one line of cause, one of fix, and the command that continues.
 */
import { IMPORT_DEFAULTS } from '../import/defaults.js';
import { describeEncoding, positionWord } from '../import/read/index.js';
import { resumeCommand, shellQuote } from '../cli/resume-command.js';
import { acceptedWords, resumeCommandOf } from './import-stop.js';
import type { ImportSummary, RunAccount } from '../import/run-import.js';
import { describeNormalization, type InvalidRow } from '../import/record/run-notes.js';
import { identityText } from '../import/row/identity.js';
import { describeLostLetters } from '../import/row/lost-letters.js';
import type { StopReason } from '../import/record/recorder.js';
import type { ImportOptions } from '../config/options.js';
import { shownPath } from '../infra/printable.js';
import { counted, formatDuration, formatLimits } from '../cli/progress.js';

/** Rows named in the changed-rows line (--json lists every one). */
const CHANGED_ROWS_SHOWN = 10;

/** What the person match found: rows changed since their client was created, people held twice. */
function matchingLines(summary: ImportSummary): string[] {
  const lines: string[] = [];
  const { changedRows, matching } = summary;
  if (changedRows.length > 0) {
    const shown = changedRows.slice(0, CHANGED_ROWS_SHOWN).join(', ');
    const more = changedRows.length > CHANGED_ROWS_SHOWN ? ` and ${changedRows.length - CHANGED_ROWS_SHOWN} more` : '';
    lines.push(
      `  changed: ${changedRows.length === 1 ? 'row' : 'rows'} ${shown}${more} changed since an earlier run of this results file created its client: not sent again ` +
        '(the service has no update; the results file names each client)',
    );
  }
  if (matching && matching.several > 0) {
    const people = matching.several === 1 ? '1 person' : `${matching.several} people`;
    lines.push(`  held twice: ${people} the service holds as several clients: their rows are existing, without an id (error_code held_several)`);
  }
  return lines;
}

/** Invalid rows printed on stderr (--json lists every one). */
export const INVALID_ROWS_SHOWN = 10;
/** Normalizations printed on stderr, most frequent first. */
const NORMALIZATIONS_SHOWN = 8;

/** How the run ended, as only the command knows it: rows accepted (--accept-failed-rows), the signal that interrupted it. */
export interface SummaryExtras {
  accepted?: boolean;
  signal?: string | undefined;
}

export function formatSummary(summary: ImportSummary, options: ImportOptions, extras: SummaryExtras = {}): string {
  const lines = [headline(summary)];
  if (summary.stopped) {
    const { cause, fix } = stopLines(summary, extras.signal);
    lines.push(`  cause: ${cause}`, `  fix: ${fix}`);
  }
  if (summary.inFlightAtStop > 0) lines.push(`  ${summary.inFlightAtStop} in flight when stopped: --resume sends them again with their keys`);
  // Known only once the file is read: the plan above could not say it.
  if (summary.source.rowsWithInvalidBytes) lines.push(`  encoding: ${describeEncoding(summary.source)}: those rows are invalid, not sent`);
  const footer = summary.source.exportFooter;
  if (footer) lines.push(`  footer: ${footer.lines.length} line${footer.lines.length === 1 ? '' : 's'} of ${footer.of} (${positionWord(summary.source.format)}s ${footer.lines[0]}–${footer.lines.at(-1)}), not rows`);
  lines.push(...invalidLines(summary));
  if (summary.normalizations.length > 0) {
    const shown = summary.normalizations.slice(0, NORMALIZATIONS_SHOWN).map(describeNormalization);
    const more = summary.normalizations.length - shown.length;
    lines.push(`  normalized: ${shown.join(', ')}${more > 0 ? `, and ${more} more` : ''}`);
  }
  if (summary.topErrors.length > 0) {
    lines.push(`  top errors: ${summary.topErrors.map((e) => `${e.code} ×${e.count}`).join(', ')}`);
  }
  if (summary.lookalikeColumns.length > 0) {
    const headers = summary.lookalikeColumns.map((column) => JSON.stringify(column.header)).join(', ');
    lines.push(`  warning: an import stops before sending at the unmapped column${summary.lookalikeColumns.length > 1 ? 's' : ''} ${headers} (see the plan above)`);
  }
  if (summary.lostLetters !== undefined) lines.push(`  warning: ${describeLostLetters(summary.lostLetters)}`);
  lines.push(...matchingLines(summary));
  if (!summary.dryRun) lines.push(`  concurrency: ${formatLimits(summary.concurrency, 'in flight')}`);
  if (summary.shard) {
    const { index, count, otherRows } = summary.shard;
    lines.push(`  shard ${index} of ${count}: ${otherRows} rows belong to the other shards (ccs-bulk results merge combines the files)`);
  }
  if (summary.account) lines.push(`  account: ${formatAccount(summary.account, summary.stopped !== undefined)}`);
  if (extras.accepted === true) lines.push(`  accepted: ${acceptedWords(summary)}`);
  lines.push(`  results: ${shownPath(summary.results)}`);
  if (summary.report) lines.push(`  review page: ${shownPath(summary.report)}`);
  // No hint when there is nothing to fix: the file holds only its header.
  if (summary.failed && summary.failedRows > 0) {
    const encoding = summary.failedEncoding?.changed ? `, ${summary.failedEncoding.name} with a BOM: a value needed it` : '';
    lines.push(
      `  rows to fix: ${counted(summary.failedRows, 'row')} in ${shownPath(summary.failed)}${encoding}; fix them there, then import that file as it is:`,
      `    ${reimportCommand(summary.failed, options, summary.failedEncoding?.changed === true)}`,
    );
  }
  // Every stop leaves rows unsent: the way back, whatever stopped it (an input error once fixed).
  if (summary.stopped) {
    lines.push(`  to continue: ${resumeCommandOf(options)}`);
    const { shard } = options.run;
    if (shard) lines.push(`  (the same shard, ${shard.index} of ${shard.count}: --shard ${shard.index}/${shard.count} continues it inside the Job or outside it)`);
  }
  return `${lines.join('\n')}\n`;
}

function headline(summary: ImportSummary): string {
  const c = summary.counts;
  const created = c.created - summary.replayed;
  const parts = summary.dryRun
    ? [`${c.valid} valid`, `${c.invalid} invalid`, `${c.duplicate} duplicate`]
    : [`${created} created`, `${c.failed} failed`, `${c.invalid} invalid`, `${c.duplicate} duplicate`];
  const existing = c.existing + summary.replayed;
  if (existing > 0) parts.splice(1, 0, `${existing} existing (already on the service, not created)`);
  if (c.skipped) parts.push(`${c.skipped} skipped (created earlier)`);
  if (c.not_attempted) parts.push(`${c.not_attempted} not attempted`);
  const took = `in ${formatDuration(summary.elapsedMs)} (${summary.rowsPerSecond} rows/s)`;
  if (summary.stopped) {
    // Every row read is in one count; a run stopped before the end of its file says so.
    const rest = summary.account?.inputEnd === false ? '; the rest of the file not read' : '';
    return `Stopped after ${summary.rows - c.not_attempted} of ${counted(summary.rows, 'row')} ${took}: ${parts.join(', ')}${rest}`;
  }
  return `${summary.dryRun ? 'Validated' : 'Imported'} ${counted(summary.rows, 'row')} ${took}: ${parts.join(', ')}`;
}

function invalidLines(summary: ImportSummary): string[] {
  const total = summary.counts.invalid;
  if (total === 0 || summary.invalidRows.length === 0) return [];
  const shown = summary.invalidRows.slice(0, INVALID_ROWS_SHOWN);
  const which = total > shown.length ? `the first ${shown.length} of ${total}` : counted(total, 'row');
  const word = positionWord(summary.source.format);
  return [`  invalid rows (${which}; every one is in the results file):`, ...shown.map((invalid) => describeInvalid(invalid, word))];
}

/** `line 5 (data row 4), column "Land": unknown country "Narnia" (…)`, one line per problem: the line (a worksheet's row) as the file shows it. */
function describeInvalid(invalid: InvalidRow, word: 'line' | 'row'): string {
  return invalid.problems
    .map((problem) => {
      const where = problem.column === undefined ? '' : `, column ${JSON.stringify(problem.column)}`;
      return `    ${word} ${invalid.line} (data row ${invalid.row})${where}: ${problem.message}`;
    })
    .join('\n');
}

const FIXES: Partial<Record<StopReason, string>> = {
  interrupted: 'nothing to fix: continue with the command below',
  max_errors: 'the failed rows share a cause: read their error_message in the results file, fix it, then continue',
  outage: 'wait until the service is back (ccs-bulk check says when it answers), then continue',
  input_error: 'fix the input where the message says, then run the import again with --resume',
  output_error: 'free space, or fix the file named, then continue',
  connection: 'ccs-bulk check names what to change in the network set-up',
  incomplete_run: 'continue with the command below (rows without an outcome are sent again under their keys); please report it',
  systemic_response: 'check --base-url: is it the service? (ccs-bulk check); then continue with the command below',
};

function stopLines(summary: ImportSummary, signal: string | undefined): { cause: string; fix: string } {
  const stop = summary.stopped!;
  // SIGTERM is a pod or a service manager stopping the run, not a person at the keyboard.
  const by = stop.reason === 'interrupted' && signal === 'SIGTERM' ? ' (SIGTERM)' : '';
  return {
    cause: (stop.cause ?? stop.message) + by,
    fix: stop.fix ?? FIXES[stop.reason] ?? 'run ccs-bulk check, then continue with the command below',
  };
}

/** The command that imports the --failed file as it is: the same mapping and reading flags. */
export function reimportCommand(failed: string, options: ImportOptions, encodingChanged: boolean): string {
  const { run } = options;
  const args = ['import', failed];
  for (const [field, header] of Object.entries(run.map ?? {})) args.push('--map', `${field}=${header}`);
  // The file has the input's columns: the same ones dropped on purpose, the same person match.
  for (const header of run.ignoreColumns ?? []) args.push('--ignore-column', header);
  if (run.identity !== undefined && run.identity.by !== 'email') args.push('--identity', identityText(run.identity));
  if (run.heldCache !== undefined) args.push('--held-cache', run.heldCache === false ? 'none' : run.heldCache);
  if (run.dateFormat !== undefined && run.dateFormat !== IMPORT_DEFAULTS.dateFormat) args.push('--date-format', run.dateFormat);
  // The file is in the input's encoding unless a value needed UTF-8 (then its BOM says so).
  if (run.read?.encoding !== undefined && !encodingChanged) args.push('--encoding', run.read.encoding);
  if (run.read?.delimiter !== undefined) args.push('--delimiter', run.read.delimiter === '\t' ? 'tab' : run.read.delimiter);
  if (run.liquidityType !== undefined && run.liquidityType !== IMPORT_DEFAULTS.liquidityType) args.push('--liquidity-type', run.liquidityType);
  if (options.applicationDateField !== IMPORT_DEFAULTS.applicationDateField) args.push('--application-date-field', options.applicationDateField);
  if (options.connection?.kind === 'sandbox') args.push('--sandbox');
  return ['ccs-bulk', ...args].map(shellQuote).join(' ');
}

export { resumeCommand };

function formatAccount(account: RunAccount, stopped: boolean): string {
  const extra = [
    account.createdEarlier > 0 ? `, ${account.createdEarlier} created earlier` : '',
    account.otherShardRows > 0 ? `, ${account.otherShardRows} in other shards` : '',
  ].join('');
  return (
    `${account.rowsRead} rows read (${account.bytesRead} of ${account.sizeBytes} bytes), ` +
    `${account.outcomesRecorded} outcomes recorded${extra}` +
    (account.complete
      ? ': every row accounted for'
      : stopped && !account.inputEnd
        ? `: the file not read past row ${account.rowsRead} (the run stopped): --resume reads and sends the rest`
        : `: INCOMPLETE from row ${account.firstMissing}`)
  );
}
