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

export interface SourceFacts {
  path: string;
  size: number;
  mtime: string;
  sha256: string | undefined;
  format: string;
  encoding: string;
  delimiter: string;
  sheet: string | undefined;
  /** The header's line (CSV) or sheet row. */
  headerLine: number;
  /** The header row as read. */
  headers: string[];
  results: string[];
  tally: SourceTally;
}

export interface VerifyCounts {
  rows: number;
  proven: number;
  accounted: Record<(typeof ACCOUNTED)[number], number>;
  rowsWithProblems: number;
  strayLines: number;
  problems: Record<ProblemKind, number>;
  problemsTotal: number;
  clientsListed: number;
  /** Clients the results files name (created or matched); of them, listed. */
  clientsClaimed: number;
  clientsClaimedListed: number;
  /** Created rows whose body hash (the trail's) was compared; those with none recorded (an import before trails). */
  bodiesChecked: number;
  bodiesUnrecorded: number;
}

export interface EvidenceWritten {
  json: string;
  sha256: string;
  summary: string;
  summarySha256: string;
  checksum: string;
}

export interface VerifyReport {
  /** Every row proven, no other client: exit 0. */
  proven: boolean;
  startedAt: string;
  finishedAt: string;
  toolVersion: string | undefined;
  /** The service as named in the evidence: its base URL (credentials removed) or the in-process sandbox. */
  service: string;
  listing: ListingFacts;
  /** How the sources were read (the import's reading settings). */
  reading: Record<string, unknown>;
  sources: SourceFacts[];
  results: Omit<ResultsFacts, 'readPath'>[];
  counts: VerifyCounts;
  /** Facts worth an auditor's eye that are not problems by themselves (a source changed since its import…). */
  notes: string[];
  /** The first problems (problems.ts FIRST_KEPT); the evidence file has them all. */
  firstProblems: Problem[];
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
