/**
 * What the two incremental modes share, seen from the export loop: a window to ask for, a
 * choice of which clients of each page to write (the others went out in an earlier run's file),
 * and a state saved only once the output is in place.
 *
 * - `--since-last`: clients *created* since the last run (a created_at window).
 * - `--new-since-last`: clients that *entered the filter* since the last run (new, or whose
 *   status changed into it), by a set of the ids already reported.
 */
import { resolve } from 'node:path';
import type { Client } from '../service/schemas.js';
import { UsageError } from '../errors.js';

export type IncrementalMode = 'since-last' | 'new-since-last';

export interface IncrementalSummary {
  /** `since-last` or `new-since-last`. */
  mode: IncrementalMode;
  /** The state file's path. */
  state: string;
  /** False on the first run (no state file yet). */
  resumed: boolean;
  /** since-last: the previous run's bound, sent as created_at.from; absent on a first run. */
  previousBound: string | undefined;
  /** Clients of the pages that earlier runs wrote to a file still counted on, dropped here. */
  skippedAtBound: number;
  /** --overwrite of the last run's file: its window was exported again, with the new one. */
  replaced?:
    | {
        /** The earlier run's file, replaced. */
        out: string;
        /** The lower bound its window started at (null: the beginning). */
        from: string | null;
      }
    | undefined;
  /**
   * A calendar-aligned report (since-last with a period): the period this run's file holds, and
   * whether more ended periods followed it (the run went on with them, each to its own file).
   */
  period?:
    | {
        /** As configured: `previous-month`. */
        name: string;
        /** The period written: `2026-02`. */
        label: string;
        /** Its IANA time zone. */
        zone: string;
        /** More periods were pending after this one. */
        more: boolean;
      }
    | undefined;
  /** A period report run again before its next period ended: nothing written, the state unchanged. */
  upToDate?:
    | {
        /** The last run's file. */
        lastOut: string;
        /** The next period (`2026-04`). */
        next: string;
        /** When it ends, on its zone's clocks (`2026-05-01 00:00 Europe/Berlin`). */
        nextEnd: string;
      }
    | undefined;
  /** new-since-last: ids in the state after this run, and the state file's size. */
  reported?: number | undefined;
  /** The state file's size, bytes. */
  stateBytes?: number | undefined;
}

export interface IncrementalRun {
  createdFrom: string | undefined;
  createdTo: string;
  /** A period report with more ended periods waiting after this one's. */
  more?: boolean | undefined;
  /** What a page keeps of a client while it waits for the writer (`select` then reads that). */
  slim?: ((client: Client) => Client) | undefined;
  /** The clients of a page to write; records them as written. */
  select(clients: readonly Client[]): Client[];
  /** After the output was committed: a failed or killed run leaves the old state. */
  save(out: string, rows: number): Promise<void>;
  summary(): IncrementalSummary;
}

/** What a state remembers of the last run's output, to tell a re-run of it from another file. */
export interface LastOutput {
  out: string;
}

export type StateFilters = { status: string[] | null; creditStatus: string[] | null };

export function stateFilters(status: readonly string[] | undefined, creditStatus: readonly string[] | undefined): StateFilters {
  return {
    status: status ? [...status].sort() : null,
    creditStatus: creditStatus ? [...creditStatus].sort() : null,
  };
}

/** Refuses a state made with other filters: it says nothing about this filter's clients. */
export function checkStateFilters(path: string, made: StateFilters, filters: StateFilters): void {
  if (JSON.stringify(made) === JSON.stringify(filters)) return;
  const show = (f: StateFilters) => `status ${f.status?.join(',') ?? 'any'}, credit_status ${f.creditStatus?.join(',') ?? 'any'}`;
  throw new UsageError(
    `the state file ${path} was made with ${show(made)}, not ${show(filters)}: use one state file per report`,
    'state_mismatch',
  );
}

/**
 * Whether an existing `out` may be replaced in an incremental run: only the last run's own file,
 * whose window is then exported again with the new one. Any other file may hold clients that
 * no later run will export again: replacing it is refused, saying why.
 */
export function replacesLast(statePath: string, last: LastOutput | undefined, out: string): boolean {
  if (last !== undefined && resolve(last.out) === resolve(out)) return true;
  throw new UsageError(
    `${out} exists and is not the last output of ${statePath}` +
      `${last === undefined ? '' : ` (${last.out})`}: replacing it would leave the clients it holds in no file; ` +
      'move it away, or name another file',
    'output_exists',
  );
}
