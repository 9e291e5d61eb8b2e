/**
 * verify's flags → one checked options object, once. The sources are read as import reads
 * them: the reading flags go through the import's own resolver (options.ts
 * resolveImportOptions, as validate uses it), so a --map, a --delimiter or a --date-format
 * means here exactly what it meant to the import. The connection is export's.
 */
import { UsageError } from '../errors.js';
import { readCreatedBound } from '../export/created-bound.js';
import { EXPORT_DEFAULTS } from '../export/defaults.js';
import { MAX_PAGE_SIZE } from '../export/options.js';
import { IMPORT_DEFAULTS } from '../import/defaults.js';
import type { Field } from '../import/fields.js';
import type { ReadOptions } from '../import/read/index.js';
import type { Identity } from '../import/row/identity.js';
import type { DateFormat } from '../import/row/normalize.js';
import { type CommonOptions, type Connection, type ImportFlags, resolveConnection, resolveImportOptions, type RunFlags } from '../config/options.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';

/** The flags as cli.ts hands them over, after the config file's layer (import's section). */
export interface VerifyFlags extends RunFlags {
  sources: readonly string[];
  results?: readonly string[] | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  pageSize?: number | undefined;
  map?: readonly string[] | undefined;
  /** Accepted as import takes it (it changes nothing of how rows read). */
  ignoreColumn?: readonly string[] | undefined;
  dateFormat?: DateFormat | undefined;
  encoding?: string | undefined;
  delimiter?: string | undefined;
  sheet?: string | undefined;
  headerRow?: number | undefined;
  maxRecordSize?: number | undefined;
  identity?: string | undefined;
  evidence?: string | undefined;
  overwrite?: boolean | undefined;
}

/** What verifyMigration runs with (the command adds the service). */
export interface VerifySettings {
  /** The input files the import read (CSV or workbooks). */
  sources: string[];
  /** Results files named with --results; absent: each source's own, found beside it. */
  results: string[] | undefined;
  /** How to read the sources, as the import read them (encoding, delimiter, sheet…). */
  read: ReadOptions;
  /** The import's column mapping: field → header. */
  map: Partial<Record<Field, string>>;
  /** How the import read ambiguous dates. */
  dateFormat: DateFormat;
  /** The liquidity type the import sent. */
  liquidityType: string;
  /** How the import told people apart (by e-mail, by a column, or not at all). */
  identity: Identity;
  /** Inclusive bounds of the listing, ISO instants; `createdTo` absent = the run's start. */
  createdFrom: string | undefined;
  /** Inclusive upper bound of the listing (ISO instant); absent: the run's start. */
  createdTo: string | undefined;
  /** Clients per page asked of the service. */
  pageSize: number;
  /** The evidence JSON; its `.html` summary and `.sha256` go beside it. */
  evidence: string | undefined;
  /** Replace existing evidence files (default: refuse them). */
  overwrite: boolean;
}

/** The options every command shares (retries, timeout, quiet, json, progress, config file), with a connection it must have. */
export interface VerifyOptions extends Omit<CommonOptions, 'connection' | 'scheme'> {
  verify: VerifySettings;
  connection: Connection;
  /** The arguments as typed, recorded (redacted) in the evidence. */
  commandLine: readonly string[];
}

export async function resolveVerifyOptions(
  flags: VerifyFlags,
  env: NodeJS.ProcessEnv,
  commandLine: readonly string[] = [],
): Promise<VerifyOptions> {
  const sources = flags.sources.map((source) => source.trim());
  if (sources.length === 0 || sources.some((source) => source === '')) {
    throw new UsageError('verify needs the source files the import read (SOURCE…)', 'usage');
  }
  const results = flags.results?.map((file) => file.trim());
  if (results?.some((file) => file === '')) throw new UsageError('--results needs a file name', 'bad_option');
  const evidence = flags.evidence?.trim();
  if (evidence === '') throw new UsageError('--evidence needs a file name', 'bad_option');
  const reading = await readingOptions(flags, sources[0]!);
  const connection = await resolveConnection(flags, env, undefined);
  return {
    verify: {
      sources,
      results,
      ...reading.settings,
      ...windowOf(flags),
      pageSize: pageSizeOf(flags.pageSize),
      evidence,
      overwrite: flags.overwrite === true,
    },
    connection,
    retries: reading.common.retries,
    timeoutMs: reading.common.timeoutMs,
    quiet: reading.common.quiet,
    json: reading.common.json,
    progressIntervalMs: reading.common.progressIntervalMs,
    configFile: flags.configFile,
    commandLine,
  };
}

/**
 * The reading flags, checked by the import's resolver as a dry run (validate) of the first
 * source: no connection, no key, nothing written. Settings the import takes and verify does
 * not (concurrency, signing) get their defaults.
 */
async function readingOptions(flags: VerifyFlags, file: string) {
  const asImport: ImportFlags = {
    ...flags,
    file,
    dateFormat: flags.dateFormat ?? IMPORT_DEFAULTS.dateFormat,
    maxRecordSize: flags.maxRecordSize ?? IMPORT_DEFAULTS.maxRecordSize,
    applicationDateField: IMPORT_DEFAULTS.applicationDateField,
    liquidityType: IMPORT_DEFAULTS.liquidityType,
    concurrency: String(IMPORT_DEFAULTS.concurrency),
    maxConcurrency: IMPORT_DEFAULTS.maxConcurrency,
    signatureHash: SERVICE_DEFAULTS.scheme.hash,
    signaturePadding: SERVICE_DEFAULTS.scheme.padding,
    results: undefined,
    resume: undefined,
    overwrite: undefined,
    failed: undefined,
    report: undefined,
    logFile: undefined,
    shard: undefined,
    shards: undefined,
    heldCache: undefined,
    checkService: undefined,
  };
  // No environment: a dry run reads none but CCS_SHARD and the key's, which verify has no use for.
  const resolved = await resolveImportOptions(asImport, {}, { dryRun: true, commandLine: [] });
  const { run } = resolved;
  return {
    settings: {
      // Large files are parsed on a second thread, as validate does: verify is as busy as its parser.
      read: { thread: 'large' as const, ...run.read },
      map: run.map ?? {},
      dateFormat: run.dateFormat ?? IMPORT_DEFAULTS.dateFormat,
      liquidityType: run.liquidityType ?? IMPORT_DEFAULTS.liquidityType,
      identity: run.identity ?? { by: 'email' as const },
    },
    common: resolved,
  };
}

/** --created-from / --created-to, read as export reads them. */
function windowOf(flags: VerifyFlags): { createdFrom: string | undefined; createdTo: string | undefined } {
  const from = flags.createdFrom === undefined ? undefined : readCreatedBound(flags.createdFrom, 'from', '--created-from').iso;
  const to = flags.createdTo === undefined ? undefined : readCreatedBound(flags.createdTo, 'to', '--created-to').iso;
  if (from !== undefined && to !== undefined && from > to) {
    throw new UsageError(`--created-from (${from}) is after --created-to (${to})`, 'bad_option');
  }
  return { createdFrom: from, createdTo: to };
}

function pageSizeOf(value: number | undefined): number {
  const size = value ?? EXPORT_DEFAULTS.pageSize;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw new UsageError(`--page-size must be a whole number from 1 to ${MAX_PAGE_SIZE} (got ${size})`, 'bad_option');
  }
  return size;
}
