/**
 * `ccs-bulk status` for a person: a block per results file, one line per question (where does
 * it stand, on which input, against which service, who ran it, which rows, what next). Every
 * value read from a file is shown printable: a sidecar or a lock may have been written by anyone
 * sharing the folder.
 */
import { printable, shownPath } from '../infra/printable.js';
import { OUTCOMES } from '../import/record/results.js';
import type { ResultsStatus } from './types.js';

export function formatStatus(status: ResultsStatus): string {
  const lines = [shownPath(status.results)];
  const line = (label: string, text: string | undefined) => {
    if (text !== undefined && text !== '') lines.push(`  ${`${label}:`.padEnd(9)} ${printable(text)}`);
  };
  line('state', describeState(status));
  line('source', describeSource(status));
  line('service', status.writtenBy === 'validate' ? 'none (a dry run: validate sends nothing)' : status.service);
  line('run', describeRun(status));
  line('rows', describeRows(status));
  line('note', status.advice);
  line('next', status.next);
  return `${lines.join('\n')}\n`;
}

function describeState(status: ResultsStatus): string {
  const what = status.backup ? 'backup, ' : status.writtenBy === 'validate' ? 'dry run, ' : '';
  switch (status.state) {
    case 'finished':
      return `${what}finished`;
    case 'stopped':
      return `${what}stopped: ${status.stop?.reason ?? '?'}${status.stop?.message ? ` (${status.stop.message})` : ''}`;
    case 'killed':
      return `${what}killed: it started and never recorded an end, and no run holds it`;
    case 'in_progress': {
      const by = status.heldBy;
      return `${what}in progress${by ? `: pid ${by.pid} on ${by.host}, since ${by.since}` : ''}`;
    }
    case 'unknown':
      return `${what}unknown: no sidecar records how its last run ended`;
  }
}

function describeSource(status: ResultsStatus): string | undefined {
  const { source } = status;
  if (source === undefined) return undefined;
  const facts = [
    source.size === undefined ? undefined : `${source.size} bytes`,
    source.mtime === undefined ? undefined : `modified ${source.mtime}`,
    source.sha256 === undefined ? undefined : `sha256 ${source.sha256}`,
  ].filter((fact) => fact !== undefined);
  const now = { unchanged: 'unchanged since the run', changed: 'CHANGED since the run', missing: 'no longer there', unknown: undefined }[source.now];
  const detail = [...facts, ...(now ? [now] : [])].join(', ');
  return `${source.path}${detail ? ` (${detail})` : ''}`;
}

function describeRun(status: ResultsStatus): string | undefined {
  if (status.startedAt === undefined && status.user === undefined) return undefined;
  const parts: string[] = [status.writtenBy ?? 'run'];
  const { user } = status;
  if (user) parts.push(`by ${user.name ?? '?'}${user.uid === undefined ? '' : ` (uid ${user.uid})`}`);
  if (status.host) parts.push(`on ${status.host}`);
  if (status.toolVersion) parts.push(`with ccs-bulk ${status.toolVersion}`);
  if (status.startedAt) parts.push(`started ${status.startedAt}`);
  if (status.finishedAt) parts.push(`ended ${status.finishedAt}`);
  if (status.earlierRuns > 0) parts.push(`(${status.earlierRuns} earlier run${status.earlierRuns === 1 ? '' : 's'} of this file)`);
  return parts.join(' ');
}

function describeRows(status: ResultsStatus): string {
  const known = OUTCOMES as readonly string[];
  const order = [...known, ...Object.keys(status.counts).filter((outcome) => !known.includes(outcome))];
  const parts = order
    .filter((outcome) => (status.counts[outcome] ?? 0) > 0)
    .map((outcome) => `${status.counts[outcome]} ${outcome.replace('_', ' ')}`);
  if (parts.length === 0) return 'none recorded yet';
  const left = status.rowsLeft === undefined ? '' : status.rowsLeft === 0 ? '; none left' : `; ${status.rowsLeft} left`;
  const last = status.rowsLeft === undefined && status.lastRow !== undefined ? `; last row recorded: ${status.lastRow}` : '';
  return `${parts.join(', ')}${left}${last}`;
}
