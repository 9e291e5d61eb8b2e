/**
 * `ccs-bulk status [FOLDER|FILE…]`: where each migration stands, from the files it left (the
 * results files, their sidecars and locks), and the one command to run next. Reads only: it
 * never takes a lock or writes a file. Exit 0 when every file could be read, 2 otherwise (a path
 * that does not exist, a file that cannot be read).
 */
import { CcsError, type ExitCode } from '../errors.js';
import type { Io } from '../infra/io.js';
import { printable } from '../infra/printable.js';
import { findResults } from '../status/find-results.js';
import { formatStatus } from '../status/format-status.js';
import { readStatus } from '../status/read-status.js';
import type { ResultsStatus } from '../status/types.js';

export interface StatusOptions {
  /** Folders and files; none: the current folder. */
  paths: readonly string[];
  json: boolean;
}

export async function runStatus(options: StatusOptions, io: Io): Promise<ExitCode> {
  const paths = options.paths.length > 0 ? options.paths : ['.'];
  const found = findResults(paths);
  const problems: { message: string; code: string }[] = [...found.problems];
  const statuses: ResultsStatus[] = [];
  for (const results of found.results) {
    try {
      statuses.push(await readStatus(results));
    } catch (error) {
      if (!(error instanceof CcsError)) throw error;
      problems.push({ message: error.message, code: error.code });
    }
  }
  // Every key in every object, null when unknown: a script reads one shape.
  if (options.json) io.stdout.write(`${JSON.stringify(statuses, (_key, value: unknown) => (value === undefined ? null : value))}\n`);
  else if (statuses.length > 0) io.stdout.write(statuses.map(formatStatus).join('\n'));
  else if (problems.length === 0) io.stderr.write(`ccs-bulk status: no results files in ${paths.map((path) => printable(path)).join(', ')}\n`);
  for (const problem of problems) io.stderr.write(`ccs-bulk: error: ${printable(problem.message)} [${problem.code}]\n`);
  return problems.length > 0 ? 2 : 0;
}
