/**
 * verify's pipeline: find the results files → scan them (the clients they name) → list the
 * service once (prints; unexplained clients as they come) → each source beside its results
 * lines (compare) → the report, and the evidence files. The paths are checked before the
 * first request; memory stays flat in the sources' rows and the service's clients (prints,
 * a spool for the problems, rows and lines streamed).
 */
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthError, InputError, ServiceError, StoppedError } from '../errors.js';
import { hashFile, toolVersion } from '../import/record/provenance.js';
import { type OnProgress, progressReporter } from '../infra/progress-report.js';
import type { ServiceClient } from '../service/client.js';
import type { Client } from '../service/schemas.js';
import { type CompareContext, compareSource, type SourceTally } from './compare.js';
import { checkEvidencePaths, type EvidencePaths, evidencePaths, writeEvidence } from './evidence.js';
import { resultsOfSources, type SourceResults } from './find-results.js';
import { listService } from './list-service.js';
import type { VerifySettings } from './options.js';
import { ProblemLog } from './problems.js';
import { openSource, readingFacts, type SourceReading } from './read-source.js';
import { countsOf, type SourceFacts, type VerifyReport } from './report.js';
import { type ResultsFacts, RowLines, scanResults } from './results-files.js';
import { ServicePrints } from './service-prints.js';
import { notesOf } from './notes.js';
import { bodyHash, CreatedHashes } from '../import/record/trail.js';
import { toCreateBody } from '../import/row/key.js';
import { serializeCreateBody } from '../service/client.js';

/** What to verify (the sources and their results files), against which service, and where to write the evidence. */
export interface VerifyMigrationOptions extends VerifySettings {
  /** The service the import ran against (createServiceClient). */
  service: ServiceClient;
  /** The service as the evidence names it (no credentials): its base URL, or the in-process sandbox. */
  serviceName: string;
  /** The command as typed, recorded (redacted) in the evidence. */
  commandLine?: readonly string[] | undefined;
  /** Aborting stops the listing and the comparison; no evidence is written. */
  signal?: AbortSignal | undefined;
  /** Progress as data: rows compared so far, with the clients listed and the problems found (at most every `progressIntervalMs`, default 100). */
  onProgress?: OnProgress | undefined;
  /** Least time between two onProgress snapshots, ms (default 100). */
  progressIntervalMs?: number | undefined;
  /** Changed rows whose client's detail is fetched, to show the service's values (default 100). */
  detailsFetched?: number | undefined;
  /** The JSON name the import sent the application date under, to rebuild the body it sent (default `application_date`). */
  applicationDateField?: string | undefined;
}

/**
 * Proves an import: lists the service's clients and checks that each source row is there once with its
 * values, or is accounted for by its results file; resolves with the report (and writes the evidence when
 * asked), `proven` false when anything is off.
 */
export async function verifyMigration(options: VerifyMigrationOptions): Promise<VerifyReport> {
  const startedAt = new Date().toISOString();
  for (const source of options.sources) assertFile(source);
  const found = resultsOfSources(options.sources, options.results);
  const inputs = [...options.sources, ...found.flatMap((entry) => entry.results)];
  const paths = options.evidence === undefined ? undefined : evidencePaths(options.evidence);
  if (paths) checkEvidencePaths(paths, inputs, options.overwrite);
  // Private (0700): the problems' spool and sorted copies of results files hold client data.
  const workdir = await mkdtemp(join(tmpdir(), 'ccs-bulk-verify-'));
  let problems: ProblemLog | undefined;
  try {
    problems = new ProblemLog(join(workdir, 'problems.jsonl'));
    return await verifyIn(options, { found, paths, workdir, problems, startedAt });
  } finally {
    problems?.close();
    await rm(workdir, { recursive: true, force: true });
  }
}

interface Plan {
  found: SourceResults[];
  paths: EvidencePaths | undefined;
  workdir: string;
  problems: ProblemLog;
  startedAt: string;
}

async function verifyIn(options: VerifyMigrationOptions, plan: Plan): Promise<VerifyReport> {
  const { found, paths, workdir, problems, startedAt } = plan;
  const hashes = new Map(options.sources.map((source) => [source, hashFile(source)]));
  const prints = new ServicePrints();
  let rows = 0;
  const snapshot = () => ({ done: rows, counters: { 'clients listed': prints.listed, problems: problems.total } });
  const progress = progressReporter(options.onProgress, snapshot, options.progressIntervalMs);
  const results = await scanAll(found, prints, workdir);
  prints.seal();
  const listing = await listService({
    service: options.service,
    createdFrom: options.createdFrom,
    createdTo: options.createdTo,
    pageSize: options.pageSize,
    prints,
    byEmail: options.identity.by === 'email',
    signal: options.signal,
    onUnexplained: (client) => problems.add(unexplained(client)),
    onPage: () => progress.tick(),
  });
  const listedAs = options.createdFrom === undefined && options.createdTo === undefined
    ? '(it is not among the clients listed)'
    : `among the clients created from ${listing.createdFrom ?? 'the start'} to ${listing.createdTo}`;
  const onRow = () => {
    rows++;
    progress.tick();
  };
  const bodies = { checked: 0, unrecorded: 0 };
  const context: CompareContext = {
    prints,
    problems,
    byEmail: options.identity.by === 'email',
    listedAs,
    detail: detailFetcher(options),
    signal: options.signal,
    onRow,
    bodyHashOf: (fields, key) => bodyHash(serializeCreateBody(toCreateBody(fields, key), options.applicationDateField)),
    trails: await readTrails(results),
    bodies,
  };
  const sources: SourceFacts[] = [];
  for (const entry of found) {
    sources.push(await verifySource(entry, results, context, options, await hashes.get(entry.source)!));
  }
  progress.finish();
  if (options.signal?.aborted) throw new StoppedError('verify interrupted', 'interrupted');
  problems.close();
  const report: VerifyReport = {
    proven: problems.total === 0,
    startedAt,
    finishedAt: new Date().toISOString(),
    toolVersion: toolVersion(),
    service: options.serviceName,
    listing,
    reading: readingFacts(options),
    sources,
    results: results.map(({ readPath: _readPath, ...facts }) => facts),
    counts: countsOf(sources, problems, prints, bodies),
    notes: notesOf(sources, results, options.serviceName),
    firstProblems: problems.first,
    evidence: undefined,
  };
  if (paths) report.evidence = await writeEvidence(paths, report, problems, options.commandLine);
  return report;
}

/** Each results file's trail of body hashes (trail.ts), where it has one. */
async function readTrails(results: readonly ResultsFacts[]): Promise<Map<string, CreatedHashes>> {
  const trails = new Map<string, CreatedHashes>();
  for (const facts of results) {
    const hashes = await CreatedHashes.read(facts.path);
    if (hashes !== undefined) trails.set(facts.path, hashes);
  }
  return trails;
}

function assertFile(source: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(source).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError(`${source} does not exist`, 'input_missing', { file: source });
    throw new InputError(`cannot read ${source}: ${code ?? error}`, 'input_unreadable', { file: source });
  }
  if (!isFile) throw new InputError(`${source} is not a file`, 'input_not_file', { file: source });
}

async function scanAll(found: readonly SourceResults[], prints: ServicePrints, workdir: string): Promise<ResultsFacts[]> {
  const results: ResultsFacts[] = [];
  for (const { source, results: files } of found) {
    for (const file of files) results.push(await scanResults(file, source, prints, workdir));
  }
  return results;
}

function unexplained(client: Client) {
  const email = client.email ? `${client.email}, ` : '';
  return {
    kind: 'unexplained' as const,
    client_id: client.id,
    message: `client ${client.id} (${email}created ${client.created_at ?? 'at an unknown time'}) was created or matched by no results file`,
  };
}

/** The client's detail for the first changed rows: the service's values, exactly. */
function detailFetcher(options: VerifyMigrationOptions): (id: string) => Promise<Client | undefined> {
  let left = options.detailsFetched ?? 100;
  return async (id) => {
    if (left <= 0) return undefined;
    left--;
    try {
      return (await options.service.getClient(id)).data;
    } catch (error) {
      // The values are a courtesy: a refused detail leaves the field named, not the run stopped.
      if (error instanceof ServiceError && !(error instanceof AuthError)) return undefined;
      throw error;
    }
  };
}

async function verifySource(
  entry: SourceResults,
  results: readonly ResultsFacts[],
  context: CompareContext,
  reading: SourceReading,
  sha256: string | undefined,
): Promise<SourceFacts> {
  const stats = statSync(entry.source);
  const opened = await openSource(entry.source, reading);
  const lines = await RowLines.open(results.filter((facts) => facts.source === entry.source));
  let tally: SourceTally;
  try {
    tally = await compareSource(entry.source, opened, lines, context);
  } finally {
    await lines.close();
    await opened.close();
  }
  const { info } = opened;
  return {
    path: entry.source,
    size: stats.size,
    mtime: stats.mtime.toISOString(),
    sha256,
    format: info.format,
    encoding: info.encoding,
    delimiter: info.delimiter,
    sheet: info.sheet,
    headerLine: info.header.line,
    results: entry.results,
    tally,
    headers: opened.headers,
  };
}
