/**
 * What verify found wrong, kept with flat memory whatever the count: every problem goes to a
 * private spool file (one JSON line each) as it is found, the counts by kind and the first few
 * stay in memory for the summaries, and the evidence file is written from the spool at the end.
 */
import { closeSync, createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { BlockWriter, createPrivate } from '../infra/output-files.js';

/** The kinds, in the order summaries list them. */
export const PROBLEM_KINDS = ['twice', 'missing', 'changed', 'unexplained'] as const;
export type ProblemKind = (typeof PROBLEM_KINDS)[number];

/** What each kind means, said once in the summaries. */
export const KIND_MEANING: Record<ProblemKind, string> = {
  twice: 'a row on the service more than once',
  missing: 'a row neither on the service nor accounted for in the results',
  changed: "a field on the service that differs from the row's",
  unexplained: 'a client on the service that no results line created or matched',
};

/** One problem, as the evidence file writes it (snake_case, absent fields left out). */
export interface Problem {
  /** twice (on the service more than once), missing, changed (a field differs), unexplained (a client no row accounts for). */
  kind: ProblemKind;
  /** The source file and its row (1-based among the data rows, as import numbers them). */
  source?: string;
  /** The row's number, 1-based among the data rows. */
  row?: number;
  /** The row's physical line (CSV) or sheet row. */
  line?: number;
  /** The results file whose line is in question. */
  results_file?: string;
  /** The client in question. */
  client_id?: string;
  /** Other clients of the same person, when the listing named them. */
  other_client_ids?: string[];
  /** The field that differs (changed). */
  field?: string;
  /** The service's value, normalized as compared (null: the service sent none; absent: not fetched). */
  service_value?: string | null;
  /** The source's value, normalized as compared. */
  source_value?: string;
  /** What is wrong, in a sentence. */
  message: string;
}

/** Problems kept in memory for the summaries (stderr shows fewer, the HTML page all of them). */
export const FIRST_KEPT = 1000;

export class ProblemLog {
  readonly counts: Record<ProblemKind, number> = { twice: 0, missing: 0, changed: 0, unexplained: 0 };
  readonly first: Problem[] = [];
  readonly #fd: number;
  readonly #out: BlockWriter;
  #total = 0;
  #closed = false;

  constructor(readonly spool: string) {
    this.#fd = createPrivate(spool);
    this.#out = new BlockWriter(this.#fd, spool);
  }

  get total(): number {
    return this.#total;
  }

  add(problem: Problem): void {
    this.counts[problem.kind]++;
    this.#total++;
    if (this.first.length < FIRST_KEPT) this.first.push(problem);
    this.#out.write(`${JSON.stringify(problem)}\n`);
  }

  /** Flushes and closes the spool (idempotent); `lines` reads it back afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#out.flush();
    } finally {
      closeSync(this.#fd);
    }
  }

  /** The spooled problems' JSON lines, in the order they were found. */
  async *lines(): AsyncGenerator<string> {
    this.close();
    const lines = createInterface({ input: createReadStream(this.spool), crlfDelay: Infinity });
    for await (const line of lines) if (line !== '') yield line;
  }
}

/** `clients.csv:12` or `clients.csv:12 (line 13)`, for messages. */
export function placeOf(problem: Pick<Problem, 'source' | 'row' | 'line'>): string {
  if (problem.source === undefined) return '';
  if (problem.row === undefined) return problem.source;
  const line = problem.line !== undefined && problem.line !== problem.row ? ` (line ${problem.line})` : '';
  return `${problem.source}:${problem.row}${line}`;
}
