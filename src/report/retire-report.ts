/**
 * One review page per run. A run that writes `--report FILE` where an earlier run's page is
 * first keeps that page under a name of its own, dated by when it was written
 * (`review.20250517-034109.html`), with a banner saying a later run replaced it; the new page is
 * written to FILE when the run ends. So a page never describes a run other than the one it names,
 * and a run killed before its end leaves no page claiming to be the latest.
 */
import { closeSync, constants, lstatSync, openSync, rmSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { OutputError } from '../errors.js';
import { fileStamp, refuseLink, writeFully } from '../infra/output-files.js';
import { readRegular } from '../infra/read-regular.js';
import { shownPath } from '../infra/printable.js';
import { esc } from './html.js';

/** A page is a few MB at most (it lists 200 rows of each kind): one far larger is not ours. */
const MAX_PAGE_BYTES = 64 * 1024 * 1024;
/** Every page ccs-bulk writes ends with this (write-report.ts). */
const OURS = 'Made by ccs-bulk.';

export interface RetireContext {
  /** When the new run began (ISO), and its results file: what the banner names. */
  startedAt: string;
  results: string;
}

/**
 * Moves an earlier run's page at `path` aside, marked as replaced; returns its new name, or
 * undefined when there was none (or the file there is not a ccs-bulk page: it is left alone and
 * replaced at the end, as before).
 */
export function retireReport(path: string, context: RetireContext): string | undefined {
  const old = readPage(path);
  if (old === undefined) return undefined;
  const kept = datedName(path, old.written);
  const banner =
    `<div class="card" role="alert" style="border:2px solid #b45309;background:#fffbeb">` +
    `<p><strong>This page describes an earlier run</strong> (written ${old.written.toISOString()}). ` +
    `A later run began at ${esc(context.startedAt)} and writes its page to ${esc(basename(path))}; ` +
    `if that file is missing, the later run did not finish: <code>ccs-bulk status ${esc(shownPath(context.results))}</code> says where it stands.</p></div>\n`;
  const html = old.text.replace('<body>\n', () => `<body>\n${banner}`);
  let fd: number;
  try {
    fd = openSync(kept, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (error) {
    throw new OutputError(`cannot keep the earlier review page as ${shownPath(kept)}: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
  }
  try {
    writeFully(fd, html, kept);
  } finally {
    closeSync(fd);
  }
  refuseLink(path);
  rmSync(path, { force: true });
  return kept;
}

/** The page's text and when it was written, if `path` is a ccs-bulk page (never read through a link or from a pipe). */
function readPage(path: string): { text: string; written: Date } | undefined {
  const page = readRegular(path, MAX_PAGE_BYTES, { whole: true });
  if (page === undefined || !page.text.includes(OURS) || !page.text.includes('<body>\n')) return undefined;
  return { text: page.text, written: page.stats.mtime };
}

/** `review.html` written 2025-05-17 03:41:09 UTC → `review.20250517-034109.html` (`-2`, `-3`… when taken). */
function datedName(path: string, written: Date): string {
  const ext = extname(path) || '.html';
  const stem = basename(path, extname(path));
  const stamp = fileStamp(written);
  for (let n = 1; ; n++) {
    const name = join(dirname(path), `${stem}.${stamp}${n === 1 ? '' : `-${n}`}${ext}`);
    try {
      lstatSync(name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return name;
    }
  }
}
