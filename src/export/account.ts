/**
 * The export's end-of-run account, kept beside the pipeline's own counters and checked before
 * the output is committed: every page from the first to the documented end (the first short or
 * empty page) arrived, in order, and every client received is written, dropped as a repeat, or
 * skipped as already exported. A gap is exit 3 (`incomplete_run`), with no file and the state
 * unchanged, never exit 0 with clients missing.
 */
import { StoppedError } from '../errors.js';
import type { FetchedPage, PagingStats } from './page.js';

export interface AccountFigures {
  /** Pages from the first to the documented end, the end included. */
  pagesExpected: number;
  /** Pages that came back, the end included. */
  pagesReceived: number;
  /** Clients in the replies, repeats included. */
  received: number;
  /** Dropped: sent again by the service. */
  duplicates: number;
  /** Dropped: in an earlier run's file (incremental). */
  skipped: number;
  /** Clients written to the output. */
  written: number;
}

export class ExportAccount {
  #first: number | undefined;
  #last: number | undefined;
  #pages = 0;
  #gap: string | undefined;
  #clamped = false;
  #received = 0;
  #fresh = 0;
  #selected = 0;
  #written = 0;

  /** A page as the pager handed it over, and how many of its clients the run kept. */
  page(page: FetchedPage, selected: number): void {
    const expected = this.#last === undefined ? page.number : this.#last + 1;
    // A 1-based server serving page 0 as page 1: page 1 repeats page 0 and is left out.
    const clamped = this.#last === 0 && page.number === 2;
    this.#clamped ||= clamped;
    if (page.number !== expected && !clamped) {
      this.#gap ??= `page ${expected} was not received (page ${page.number} came after page ${this.#last ?? '?'})`;
    }
    this.#first ??= page.number;
    this.#last = page.number;
    this.#pages++;
    this.#received += page.received;
    this.#fresh += page.clients.length;
    this.#selected += selected;
  }

  /** Clients handed to the encoder. */
  wrote(count: number): void {
    this.#written += count;
  }

  /** Throws `incomplete_run` on a gap; `rows` is the pipeline's own count of rows written. */
  check(stats: PagingStats, rows: number): AccountFigures {
    const figures = this.figures(stats);
    const gap = this.#gap ?? this.#missing(stats, rows);
    if (gap !== undefined) {
      throw new StoppedError(
        `the export could not account for every client: ${gap}; nothing was written (no file, the state unchanged): run it again`,
        'incomplete_run',
      );
    }
    return figures;
  }

  figures(stats: PagingStats): AccountFigures {
    const start = this.#first ?? stats.pageBase ?? 0;
    return {
      pagesExpected: stats.endPage === undefined ? this.#pages : stats.endPage - start + 1,
      pagesReceived: this.#pages,
      received: this.#received,
      duplicates: this.#received - this.#fresh,
      skipped: this.#fresh - this.#selected,
      written: this.#written,
    };
  }

  #missing(stats: PagingStats, rows: number): string | undefined {
    if (this.#clamped && stats.pageBase !== 1) return 'page 1 was not received (page 2 came after page 0)';
    const end = stats.endPage;
    if (end === undefined) return 'the last page (a short or empty one) was never received';
    if (this.#last !== undefined && this.#last < end - 1) return `pages ${this.#last + 1} to ${end - 1} were not received`;
    if (this.#received !== this.#fresh + stats.duplicates) {
      return `${this.#received} clients received, ${this.#fresh} new and ${stats.duplicates} repeats`;
    }
    if (this.#selected !== this.#written || this.#written !== rows) {
      return `${this.#selected} clients to write, ${this.#written} encoded, ${rows} counted as written`;
    }
    return undefined;
  }
}
