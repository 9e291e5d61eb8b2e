/**
 * What a results file was written by, kept in a JSON sidecar beside it (`<results>.meta.json`):
 * the results file itself stays a plain CSV that spreadsheets, `results merge` and --resume
 * read as they always did. The sidecar says which command wrote the file and against which
 * service, so that a rehearsal's `created` rows (on a sandbox that is gone) never make a real
 * run skip rows the real service has never seen, and so that a validate's file (which records
 * no sends) can be replaced by the next run without --overwrite.
 */
import { closeSync, fsyncSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { tempBeside } from '../../infra/temp-files.js';
import { createPrivate, refuseLink, writeFully } from '../../infra/output-files.js';

export interface ResultsMeta {
  /** Which command wrote the results file. */
  writtenBy: 'import' | 'validate';
  /** The base URL, `in-process sandbox …`, or undefined (validate sends nothing). */
  service: string | undefined;
  input: string;
  startedAt: string;
}

export function metaPath(results: string): string {
  return `${results}.meta.json`;
}

/** The sidecar, or undefined when there is none (a file written before sidecars existed) or it is unreadable. */
export function readMeta(results: string): ResultsMeta | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(metaPath(results), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const meta = parsed as Record<string, unknown>;
  const writtenBy = meta.written_by === 'validate' ? 'validate' : meta.written_by === 'import' ? 'import' : undefined;
  if (writtenBy === undefined) return undefined;
  return {
    writtenBy,
    service: typeof meta.service === 'string' ? meta.service : undefined,
    input: typeof meta.input === 'string' ? meta.input : '',
    startedAt: typeof meta.started_at === 'string' ? meta.started_at : '',
  };
}

/** Written whole beside the results file and renamed into place: never a torn sidecar. */
export function writeMeta(results: string, meta: ResultsMeta): void {
  const path = metaPath(results);
  refuseLink(path);
  const temp = tempBeside(path);
  const text = `${JSON.stringify(
    { ccs_bulk_results: 1, written_by: meta.writtenBy, service: meta.service ?? null, input: meta.input, started_at: meta.startedAt },
    null,
    2,
  )}\n`;
  const fd = createPrivate(temp);
  try {
    writeFully(fd, text, temp);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new UsageError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'output_unwritable');
  }
}

/**
 * --resume continues a file only against the service its `created` rows are on. A file with no
 * sidecar (older versions) or written by validate (no sends) is resumed as before.
 */
export function assertSameService(results: string, meta: ResultsMeta | undefined, service: string | undefined): void {
  if (meta?.writtenBy !== 'import' || meta.service === undefined || service === undefined) return;
  if (meta.service === service) return;
  throw new UsageError(
    `results file ${results} was written against ${meta.service}, not ${service}: its created rows are not on this service. ` +
      'Use --overwrite to start that file again, or --results with another file',
    'results_other_service',
  );
}
