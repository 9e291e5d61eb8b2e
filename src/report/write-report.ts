/**
 * `--report FILE`: the review page, put together from the run's notes and written whole — a
 * temp file beside it, synced, renamed into place — so a reader never opens half a page.
 * Private (0600) like the results file: it holds client data.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { OutputError } from '../errors.js';
import { shownPath } from '../infra/printable.js';
import { tempBeside } from '../infra/temp-files.js';
import type { ReportNotes } from './collect.js';
import { page } from './html.js';
import { chart, serviceErrors, stopped } from './import-sections.js';
import { composites } from './composite-section.js';
import { counts, duplicates, mapping, normalizations, overview, problems, type ReportEnd } from './sections.js';

export type { ReportEnd };

export function renderReport(notes: ReportNotes, end: ReportEnd): string {
  const { dryRun, source } = notes.plan;
  const sections = [overview(notes, end), stopped(end), counts(notes, end)];
  if (!dryRun) sections.push(chart(notes), serviceErrors(notes));
  sections.push(
    problems(notes, end.counts.invalid ?? 0),
    duplicates(notes),
    mapping(notes),
    composites(notes),
    normalizations(end.normalizations),
    '<footer class="muted"><p>Made by ccs-bulk. Every row is in the results file; this page lists the first 200 of each kind.</p></footer>',
  );
  return page(`ccs-bulk ${dryRun ? 'validate' : 'import'}: ${source.file}`, sections.filter((s) => s !== '').join('\n'));
}

export function writeReport(path: string, html: string): void {
  const temp = tempBeside(path);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', 0o600);
    const bytes = Buffer.from(html, 'utf8');
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    // `force` ignores only a missing file: a path under a file (ENOTDIR) would throw from here.
    try {
      rmSync(temp, { force: true });
    } catch {
      // never made
    }
    throw new OutputError(`cannot write the review page ${shownPath(path)}: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
  }
}
