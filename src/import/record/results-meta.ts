/**
 * What a results file was written by, kept in a JSON sidecar beside it (`<results>.meta.json`):
 * the results file itself stays a plain CSV that spreadsheets, `results merge` and --resume
 * read as they always did. The sidecar says which command wrote the file and against which
 * service, so that a rehearsal's `created` rows (on a sandbox that is gone) never make a real
 * run skip rows the real service has never seen, and so that a validate's file (which records
 * no sends) can be replaced by the next run without --overwrite. It also says who ran it, with
 * which ccs-bulk, on which input (size, time, SHA-256), and how the run ended (`ccs-bulk status`).
 * Every field but `written_by` is optional on read: sidecars of older versions hold four.
 */
import { closeSync, fsyncSync, renameSync, rmSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { readRegular } from '../../infra/read-regular.js';
import { tempBeside } from '../../infra/temp-files.js';
import { createPrivate, refuseLink, writeFully } from '../../infra/output-files.js';
import type { Runner, SourceStamp } from './provenance.js';

/** How a run ended, written when it closes its results file. */
export interface RunEnd {
  finishedAt: string;
  /** `stopped` with reason `error`: the run threw before it could say how it ended. */
  state: 'finished' | 'stopped';
  stop?: { reason: string; message: string } | undefined;
  /** Lines in the results file by outcome, when it closed. */
  counts: Record<string, number>;
}

/** One run's record: the last run's is the sidecar itself; earlier runs of a resumed file are kept in `earlierRuns`. */
export interface RunRecord {
  /** Which command wrote the results file. */
  writtenBy: 'import' | 'validate';
  /** The base URL, `in-process sandbox …`, or undefined (validate sends nothing). */
  service: string | undefined;
  startedAt: string;
  runner?: Partial<Runner> | undefined;
  source?: SourceStamp | undefined;
  /** This run continued the file (--resume). */
  resumed?: boolean | undefined;
  /** Absent while the run goes, and for a run killed before it could write it. */
  end?: RunEnd | undefined;
}

export interface ResultsMeta extends RunRecord {
  input: string;
  /** The runs this file was resumed from, oldest first (at most MAX_EARLIER_RUNS). */
  earlierRuns?: RunRecord[] | undefined;
}

/** The sidecar's format: 2 added provenance and the run's end (1 had written_by, service, input, started_at). */
const FORMAT = 2;
export const MAX_EARLIER_RUNS = 50;
/** A sidecar is a few kB: anything far longer was not written by ccs-bulk, and is not read whole. */
const MAX_META_BYTES = 1024 * 1024;

export function metaPath(results: string): string {
  return `${results}.meta.json`;
}

/**
 * The sidecar's text, or undefined when there is none (a file written before sidecars existed)
 * or it cannot be read as one: never through a link, never a pipe (it would wait), never huge.
 */
export function readMetaText(results: string): string | undefined {
  return readRegular(metaPath(results), MAX_META_BYTES, { whole: true })?.text;
}

/** The sidecar, or undefined when there is none or it is unreadable (readMetaText). */
export function readMeta(results: string): ResultsMeta | undefined {
  const text = readMetaText(results);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const record = parseRun(parsed);
  if (record === undefined) return undefined;
  const json = parsed as Record<string, unknown>;
  const earlier = Array.isArray(json.earlier_runs) ? json.earlier_runs.map(parseRun).filter((run) => run !== undefined) : [];
  return {
    ...record,
    input: typeof json.input === 'string' ? json.input : '',
    ...(earlier.length > 0 && { earlierRuns: earlier }),
  };
}

type Json = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);

/** One run's fields, each kept only when it has its shape. */
function parseRun(value: unknown): RunRecord | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const json = value as Json;
  const writtenBy = json.written_by === 'validate' ? 'validate' : json.written_by === 'import' ? 'import' : undefined;
  if (writtenBy === undefined) return undefined;
  const runner = parseRunner(json);
  const source = parseSource(json.source);
  const end = parseEnd(json);
  return {
    writtenBy,
    service: text(json.service),
    startedAt: text(json.started_at) ?? '',
    ...(runner && { runner }),
    ...(source && { source }),
    ...(typeof json.resumed === 'boolean' && { resumed: json.resumed }),
    ...(end && { end }),
  };
}

function parseRunner(json: Json): Partial<Runner> | undefined {
  const runner: Partial<Runner> = {};
  const version = text(json.tool_version);
  if (version !== undefined) runner.toolVersion = version;
  if (typeof json.user === 'object' && json.user !== null) {
    const user = json.user as Json;
    runner.user = { name: text(user.name), uid: count(user.uid) };
  }
  const host = text(json.host);
  if (host !== undefined) runner.host = host;
  const pid = count(json.pid);
  if (pid !== undefined) runner.pid = pid;
  const cwd = text(json.cwd);
  if (cwd !== undefined) runner.cwd = cwd;
  if (Array.isArray(json.command_line) && json.command_line.every((word) => typeof word === 'string')) {
    runner.commandLine = json.command_line as string[];
  }
  return Object.keys(runner).length > 0 ? runner : undefined;
}

function parseSource(value: unknown): SourceStamp | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const json = value as Json;
  const size = count(json.size);
  const mtime = text(json.mtime);
  if (size === undefined || mtime === undefined) return undefined;
  const sha256 = text(json.sha256);
  return { size, mtime, ...(sha256 !== undefined && /^[0-9a-f]{64}$/.test(sha256) && { sha256 }) };
}

function parseEnd(json: Json): RunEnd | undefined {
  const finishedAt = text(json.finished_at);
  const state = json.state === 'finished' || json.state === 'stopped' ? json.state : undefined;
  if (finishedAt === undefined || state === undefined) return undefined;
  const counts: Record<string, number> = {};
  if (typeof json.counts === 'object' && json.counts !== null) {
    for (const [outcome, n] of Object.entries(json.counts as Json)) if (count(n) !== undefined) counts[outcome] = n as number;
  }
  const stop = typeof json.stop === 'object' && json.stop !== null ? (json.stop as Json) : undefined;
  const reason = text(stop?.reason);
  return {
    finishedAt,
    state,
    ...(reason !== undefined && { stop: { reason, message: text(stop?.message) ?? '' } }),
    counts,
  };
}

/** One run's fields as the sidecar writes them (snake_case; undefined fields left out). */
function runJson(run: RunRecord): Json {
  const { runner, end } = run;
  return {
    written_by: run.writtenBy,
    service: run.service ?? null,
    started_at: run.startedAt,
    tool_version: runner?.toolVersion,
    user: runner?.user,
    host: runner?.host,
    pid: runner?.pid,
    cwd: runner?.cwd,
    command_line: runner?.commandLine,
    source: run.source,
    resumed: run.resumed,
    finished_at: end?.finishedAt,
    state: end?.state,
    stop: end?.stop,
    counts: end?.counts,
  };
}

/** Written whole beside the results file and renamed into place: never a torn sidecar. */
export function writeMeta(results: string, meta: ResultsMeta): void {
  const { written_by, service, ...rest } = runJson(meta);
  const earlier = meta.earlierRuns?.slice(-MAX_EARLIER_RUNS).map(runJson);
  const json = { ccs_bulk_results: FORMAT, written_by, service, input: meta.input, ...rest, earlier_runs: earlier };
  writeMetaText(metaPath(results), `${JSON.stringify(json, null, 2)}\n`);
}

/** A sidecar's text, written private (0600) at a temp name and renamed to `path` (never through a link). */
export function writeMetaText(path: string, text: string): void {
  refuseLink(path);
  const temp = tempBeside(path);
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

/** The run a resumed file came from, kept with the runs before it (the sidecar is rewritten by each run). */
export function earlierRunsOf(previous: ResultsMeta | undefined): RunRecord[] | undefined {
  if (previous === undefined) return undefined;
  const { input: _input, earlierRuns, ...run } = previous;
  return [...(earlierRuns ?? []), run].slice(-MAX_EARLIER_RUNS);
}

/**
 * --resume continues a file only against the service its `created` rows are on. A file with no
 * sidecar (older versions) or written by validate (no sends) is resumed as before.
 */
export function assertSameService(results: string, meta: ResultsMeta | undefined, service: string | undefined): void {
  if (meta?.writtenBy !== 'import' || meta.service === undefined || service === undefined) return;
  if (meta.service === service) return;
  // Nothing of it is on that service (a base URL whose path was wrong): the right one may continue it.
  const counts = meta.end?.counts;
  if (counts !== undefined && (counts.created ?? 0) + (counts.existing ?? 0) + (counts.skipped ?? 0) === 0) return;
  throw new UsageError(
    `results file ${results} was written against ${meta.service}, not ${service}: its created rows are not on this service. ` +
      'Use --overwrite to start that file again, or --results with another file',
    'results_other_service',
  );
}
