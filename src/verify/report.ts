/**
 * What a verify run found, as data: the library returns it, the command prints it, and the
 * evidence file is its JSON (snake_case) with every problem.
 */
import type { Runner } from '../import/record/provenance.js';
import type { ACCOUNTED, SourceTally } from './compare.js';
import type { ListingFacts } from './list-service.js';
import type { Problem, ProblemKind, ProblemLog } from './problems.js';
import type { ResultsFacts } from './results-files.js';
import type { ServicePrints } from './service-prints.js';

/** A source file as it was read: where, how big, its hash, how it was read, and its tally. */
export interface SourceFacts {
  /** The file's path. */
  path: string;
  /** Its size, bytes. */
  size: number;
  /** Its modification time (ISO instant). */
  mtime: string;
  /** SHA-256 of its bytes (hex). */
  sha256: string | undefined;
  /** csv, xlsx, xls or ods. */
  format: string;
  /** The text encoding it was read in. */
  encoding: string;
  /** The CSV delimiter it was read with. */
  delimiter: string;
  /** The sheet read, for a workbook. */
  sheet: string | undefined;
  /** The header's line (CSV) or sheet row. */
  headerLine: number;
  /** The header row as read. */
  headers: string[];
  /** The results files that account for its rows. */
  results: string[];
  /** Its rows: proven, accounted for, with problems. */
  tally: SourceTally;
}

/** The verification's totals over every source. */
export interface VerifyCounts {
  /** Data rows in the sources. */
  rows: number;
  /** Rows on the service once, every compared field equal. */
  proven: number;
  /** Rows not on the service for a recorded reason: existing, invalid, failed, duplicate. */
  accounted: Record<(typeof ACCOUNTED)[number], number>;
  /** Rows with at least one problem. */
  rowsWithProblems: number;
  /** Results lines for rows the sources do not have. */
  strayLines: number;
  /** Problems by kind: twice, missing, changed, unexplained. */
  problems: Record<ProblemKind, number>;
  /** Problems found, all kinds. */
  problemsTotal: number;
  /** Clients the service listed within the bounds. */
  clientsListed: number;
  /** Clients the results files name (created or matched); of them, listed. */
  clientsClaimed: number;
  /** Of clientsClaimed: those the listing holds. */
  clientsClaimedListed: number;
  /** Created rows whose body hash (the trail's) was compared; those with none recorded (an import before trails). */
  bodiesChecked: number;
  /** Created rows with no body hash recorded (an import before trails): compared by fields only. */
  bodiesUnrecorded: number;
}

/** The evidence files written. */
export interface EvidenceWritten {
  /** The evidence JSON's path: every problem, with the facts around them. */
  json: string;
  /** SHA-256 of the JSON (hex). */
  sha256: string;
  /** The HTML summary's path. */
  summary: string;
  /** SHA-256 of the HTML summary (hex). */
  summarySha256: string;
  /** The `.sha256` file's path (`sha256sum -c` checks both). */
  checksum: string;
}

/** What a verification found, as data; the evidence file is its JSON, with every problem. */
export interface VerifyReport {
  /** Every row proven, no other client: exit 0. */
  proven: boolean;
  /** When the run started (ISO instant). */
  startedAt: string;
  /** When it finished (ISO instant). */
  finishedAt: string;
  /** The ccs-bulk version that verified. */
  toolVersion: string | undefined;
  /** The service as named in the evidence: its base URL (credentials removed) or the in-process sandbox. */
  service: string;
  /** How the service was listed: bounds, pages, requests. */
  listing: ListingFacts;
  /** How the sources were read (the import's reading settings). */
  reading: Record<string, unknown>;
  /** Each source file, as read. */
  sources: SourceFacts[];
  /** Each results file, as read. */
  results: Omit<ResultsFacts, 'readPath'>[];
  /** The totals. */
  counts: VerifyCounts;
  /** Facts worth an auditor's eye that are not problems by themselves (a source changed since its import…). */
  notes: string[];
  /** The first problems (up to 1000); the evidence file has them all. */
  firstProblems: Problem[];
  /** The evidence files, when `evidence` was given. */
  evidence: EvidenceWritten | undefined;
}

/** The evidence JSON's head: every key but `problems`, which follows from the spool. */
export function evidenceHead(report: VerifyReport, runner: Runner): Record<string, unknown> {
  return {
    ccs_bulk_verify: 1,
    verdict: verdictOf(report),
    tool: { name: 'ccs-bulk', version: report.toolVersion ?? null },
    started_at: report.startedAt,
    finished_at: report.finishedAt,
    run_by: { user: runner.user, host: runner.host, cwd: runner.cwd, command_line: runner.commandLine ?? null },
    service: serviceJson(report),
    reading: report.reading,
    sources: sourcesJson(report),
    results_files: report.results.map((results) => ({
      path: results.path,
      source: results.source,
      size: results.size,
      sha256: results.sha256 ?? null,
      lines: results.lines,
      in_row_order: !results.sorted,
      meta: results.meta ?? null,
    })),
    counts: countsJson(report.counts),
    notes: report.notes,
  };
}

export const verdictOf = (report: VerifyReport) => (report.proven ? 'proven' : 'problems');

export function serviceJson({ service, listing }: VerifyReport): Record<string, unknown> {
  return {
    base_url: service,
    created_from: listing.createdFrom,
    created_to: listing.createdTo,
    created_to_is_run_start: listing.toIsRunStart,
    clients_listed: listing.clients,
    pages: listing.pages,
    requests: listing.requests,
    page_base: listing.pageBase,
    page_size: listing.pageSize,
    repeats_dropped: listing.repeatsDropped,
  };
}

export function sourcesJson(report: VerifyReport): Record<string, unknown>[] {
  return report.sources.map((source) => ({
    path: source.path,
    size: source.size,
    mtime: source.mtime,
    sha256: source.sha256 ?? null,
    format: source.format,
    encoding: source.encoding,
    delimiter: source.delimiter,
    sheet: source.sheet ?? null,
    header_line: source.headerLine,
    columns: source.headers,
    results_files: source.results,
    rows: source.tally.rows,
    proven: source.tally.proven,
    accounted: source.tally.accounted,
    rows_with_problems: source.tally.rowsWithProblems,
    stray_lines: source.tally.strayLines,
  }));
}

export function countsJson(counts: VerifyCounts): Record<string, unknown> {
  return {
    rows: counts.rows,
    proven: counts.proven,
    accounted: counts.accounted,
    rows_with_problems: counts.rowsWithProblems,
    stray_lines: counts.strayLines,
    problems: counts.problems,
    problems_total: counts.problemsTotal,
    clients_listed: counts.clientsListed,
    clients_claimed: counts.clientsClaimed,
    clients_claimed_listed: counts.clientsClaimedListed,
    bodies_checked: counts.bodiesChecked,
    bodies_unrecorded: counts.bodiesUnrecorded,
  };
}

export function countsOf(
  sources: readonly SourceFacts[],
  problems: ProblemLog,
  prints: ServicePrints,
  bodies: { checked: number; unrecorded: number },
): VerifyCounts {
  const sum = (pick: (tally: SourceTally) => number) => sources.reduce((total, source) => total + pick(source.tally), 0);
  return {
    rows: sum((tally) => tally.rows),
    proven: sum((tally) => tally.proven),
    accounted: {
      existing: sum((tally) => tally.accounted.existing),
      invalid: sum((tally) => tally.accounted.invalid),
      failed: sum((tally) => tally.accounted.failed),
      duplicate: sum((tally) => tally.accounted.duplicate),
    },
    rowsWithProblems: sum((tally) => tally.rowsWithProblems),
    strayLines: sum((tally) => tally.strayLines),
    problems: { ...problems.counts },
    problemsTotal: problems.total,
    clientsListed: prints.listed,
    clientsClaimed: prints.claims,
    clientsClaimedListed: prints.claimedListed,
    bodiesChecked: bodies.checked,
    bodiesUnrecorded: bodies.unrecorded,
  };
}
