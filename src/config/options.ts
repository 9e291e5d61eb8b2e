/**
 * Flags + environment → one resolved, validated options object, once. Nothing after this
 * file reads process.env or argv. Secrets come from the environment or a file, never from a
 * bare flag that would show in `ps`.
 */
import { readMappingFile } from './mapping-file.js';
import { isTemplate, parseTemplate } from '../import/row/composite.js';
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import type { ExportFormat } from '../export/defaults.js';
import { checkExportSettings, type ExportOptions } from '../export/options.js';
import { defaultResultsPath } from '../import/defaults.js';
import { FIELDS, type Field } from '../import/fields.js';
import type { DateFormat } from '../import/row/normalize.js';
import type { ReadOptions } from '../import/read/index.js';
import type { ImportSettings } from '../import/run-import.js';
import { parseShard, type Shard } from '../import/send/shard.js';
import { DEFAULT_IDENTITY, type Identity, parseIdentity } from '../import/row/identity.js';
import { type NetworkArgv, type ResolvedNetwork, resolveNetwork } from './network-options.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import { MAX_IN_FLIGHT } from '../service/in-flight-bound.js';
import type { Direction } from '../service/schemas.js';
import type { SignatureHash, SignaturePadding, SignatureScheme } from '../service/signing.js';
import { parseBaseUrl } from '../service/url.js';
import { printable } from '../infra/printable.js';
import { shellQuote } from '../cli/resume-command.js';

/** The flags every service command takes, as cli.ts hands them over (defaults applied). */
export interface CommonFlags extends NetworkArgv {
  baseUrl?: string | undefined;
  tokenFile?: string | undefined;
  /** The variable holding the token, named by the config file's tokenEnv (after CCS_TOKEN). */
  tokenEnv?: string | undefined;
  sandbox?: boolean | undefined;
  timeout: number;
  retries: number;
  quiet?: boolean | undefined;
  json?: boolean | undefined;
  /** The config file the settings were layered from (config.ts sets it). */
  configFile?: string | undefined;
}

/** The flags of a command that runs rows (import, export): config.ts fills the interval's default. */
export interface RunFlags extends CommonFlags {
  progressInterval: number;
}

export interface ImportFlags extends RunFlags {
  file: string;
  signingKey?: string | undefined;
  signatureHash: SignatureHash;
  signaturePadding: SignaturePadding;
  results?: string | undefined;
  resume?: boolean | undefined;
  overwrite?: boolean | undefined;
  acceptChangedSource?: boolean | undefined;
  /** Exit 0 when the only rows not imported are invalid or refused for what they hold. */
  acceptFailedRows?: boolean | undefined;
  failed?: string | undefined;
  report?: string | undefined;
  map?: readonly string[] | undefined;
  dateFormat: DateFormat;
  encoding?: string | undefined;
  delimiter?: string | undefined;
  sheet?: string | undefined;
  headerRow?: number | undefined;
  maxRecordSize: number;
  applicationDateField: string;
  liquidityType: string;
  concurrency: string;
  maxConcurrency: number;
  shard?: string | undefined;
  shards?: number | undefined;
  rate?: number | undefined;
  maxErrors?: number | undefined;
  logFile?: string | undefined;
  /** --ignore-column, repeatable: unmapped columns dropped on purpose. */
  ignoreColumn?: readonly string[] | undefined;
  /** `email`, `none` or `column:HEADER`; absent = email. */
  identity?: string | undefined;
  /** A file, or `none`. */
  heldCache?: string | undefined;
  /** validate: also ask the service which e-mails it holds. */
  checkService?: boolean | undefined;
  /** --mapping: a mapping file (mapping-file.ts), under --map. */
  mapping?: string | undefined;
  /** --save-mapping: write the mapping the run resolved here. */
  saveMapping?: string | undefined;
}

export interface CheckFlags extends CommonFlags {
  signingKey?: string | undefined;
  signatureHash: SignatureHash;
  signaturePadding: SignaturePadding;
  detectSignature?: boolean | undefined;
}

export interface ExportFlags extends RunFlags {
  out: string;
  format?: ExportFormat | undefined;
  /** A comma list, or (from a config file) an array whose items may hold commas in their headers. */
  columns?: string | readonly string[] | undefined;
  bom?: boolean | undefined;
  escapeFormulas: boolean;
  status?: string | undefined;
  creditStatus?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  country?: string | undefined;
  delimiter?: string | undefined;
  csvDates?: 'iso' | 'spreadsheet' | undefined;
  sheetName?: string | undefined;
  summarySheet?: 'first' | 'last' | 'none' | undefined;
  summaryFile?: boolean | undefined;
  split?: string | undefined;
  sort?: string | undefined;
  /** A calendar window in words or units (`previous-month`, `2026-02`). */
  period?: string | undefined;
  /** IANA zone of the window, the names' dates and (--dates-in-timezone) the dates written. */
  timezone?: string | undefined;
  datesInTimezone?: boolean | undefined;
  direction: Direction;
  pageSize: number;
  prefetch: string | number;
  maxPrefetch?: number | undefined;
  sinceLast?: string | undefined;
  newSinceLast?: string | undefined;
  overwrite?: boolean | undefined;
  gzip?: boolean | undefined;
  /** Octal permission bits of the report file, e.g. `640`. */
  fileMode?: string | undefined;
  logFile?: string | undefined;
  /** The config file's report this run is (`{report}` in --out). */
  report?: string | undefined;
}

/** Where requests go: the in-process emulator, or a configured service. */
export type Connection =
  | { kind: 'sandbox' }
  | {
      kind: 'service';
      baseUrl: string;
      token: string;
      /** Said before the run: a token file its group can read. */
      warnings: string[];
      signingKeyFile: string | undefined;
      /** Proxy, extra CAs, client certificate, outage timeout. */
      network: ResolvedNetwork;
    };

export interface CommonOptions {
  connection: Connection | undefined;
  scheme: SignatureScheme;
  retries: number;
  timeoutMs: number;
  quiet: boolean;
  json: boolean;
  progressIntervalMs: number;
  /** The config file read, if any. */
  configFile: string | undefined;
}

export interface ImportOptions extends CommonOptions {
  /** What importClients runs with, resolved (the command adds the service and callbacks). */
  run: Required<Pick<ImportSettings, 'file' | 'results' | 'dryRun' | 'concurrency'>> & ImportSettings;
  /** The service client's wire name for the application date. */
  applicationDateField: string;
  /** --log-file: a JSON line per attempt and run event. */
  logFile: string | undefined;
  /** The arguments as typed, to print the exact resume command. */
  commandLine: readonly string[];
  /** --accept-failed-rows: exit 0 when the only rows not imported are invalid or refused for what they hold. */
  acceptFailedRows: boolean;
  /** --save-mapping: where the resolved column mapping is written once the plan is settled. */
  saveMapping?: string | undefined;
}

const positiveInt = (flag: string, max: number) =>
  z
    .number({ error: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .min(1, `${flag} must be at least 1`)
    .max(max, `${flag} must be at most ${max}`);

function check<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid option', 'bad_option');
  return parsed.data;
}

/** `\t`, `tab` and the character itself all mean a tab. */
function parseDelimiter(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const named: Record<string, string> = { '\\t': '\t', tab: '\t', comma: ',', semicolon: ';', pipe: '|' };
  const delimiter = named[text.toLowerCase()] ?? text;
  if ([...delimiter].length !== 1 || /["\r\n]/.test(delimiter)) {
    throw new UsageError(`--delimiter must be one character (or tab), got "${text}"`, 'bad_option');
  }
  return delimiter;
}

function parseMap(entries: readonly string[] | undefined): Partial<Record<Field, string>> {
  const map: Partial<Record<Field, string>> = {};
  for (const entry of entries ?? []) {
    const at = entry.indexOf('=');
    const field = entry.slice(0, at).trim().toLowerCase() as Field;
    const header = entry.slice(at + 1);
    if (at <= 0 || header.trim() === '') {
      throw new UsageError(`--map takes field=Header, got "${entry}"`, 'bad_option');
    }
    if (!FIELDS.includes(field)) {
      throw new UsageError(`--map: unknown field "${field}"; fields are ${FIELDS.join(', ')}`, 'bad_option');
    }
    // A template's braces are checked here, before any file is read.
    if (isTemplate(header)) parseTemplate(field, header);
    map[field] = header;
  }
  return map;
}

/**
 * An environment variable as the options read it: blank counts as unset (`CCS_TOKEN=` in a
 * script or a CI secret that did not resolve), and `empty` lets the message say so.
 */
export function fromEnv(env: NodeJS.ProcessEnv, name: string): { value: string | undefined; empty: boolean } {
  const raw = env[name];
  const value = raw?.trim();
  return value ? { value, empty: false } : { value: undefined, empty: raw !== undefined };
}

/** ` (NAME is set but empty)`, when it is: what a "none given" message adds. */
export const emptyNote = (env: NodeJS.ProcessEnv, name: string) =>
  fromEnv(env, name).empty ? ` (${name} is set but empty)` : '';

/** --signing-key, else CCS_SIGNING_KEY_FILE (blank = unset). */
export function signingKeyFrom(argv: { signingKey?: string | undefined }, env: NodeJS.ProcessEnv): string | undefined {
  if (argv.signingKey?.trim() === '') {
    throw new UsageError('--signing-key is empty: give the path of the RSA-4096 private key PEM', 'key_missing');
  }
  return argv.signingKey ?? fromEnv(env, 'CCS_SIGNING_KEY_FILE').value;
}

const ENV_HELP =
  'set CCS_BASE_URL and CCS_TOKEN (or --base-url and --token-file), or use --sandbox for a local rehearsal';

/**
 * A token file every account can read (or change) is refused, like such a signing key: the
 * token is as good as the password of the service's account. One its group can read is
 * warned about (Kubernetes mounts a Secret group-readable for a pod's fsGroup). POSIX modes
 * only: Windows has ACLs, which a mode does not show.
 */
function secretFileWarnings(path: string, mode: number | undefined): string[] {
  if (mode === undefined || process.platform === 'win32' || (mode & 0o066) === 0) return [];
  const fix = `run: chmod 600 ${shellQuote(path)}`;
  if ((mode & 0o006) !== 0) {
    const how = (mode & 0o004) !== 0 ? 'readable' : 'writable';
    throw new UsageError(`token file ${printable(path)} is ${how} by every user (mode ${(mode & 0o777).toString(8)}); ${fix}`, 'token_invalid');
  }
  return [`token file ${printable(path)} is ${(mode & 0o040) !== 0 ? 'readable' : 'writable'} by its group (mode ${(mode & 0o777).toString(8)}); ${fix}`];
}

async function readToken(
  argv: { tokenFile?: string | undefined; tokenEnv?: string | undefined },
  env: NodeJS.ProcessEnv,
): Promise<{ token: string; warnings: string[] }> {
  if (argv.tokenFile !== undefined) {
    let text: string;
    let mode: number | undefined;
    try {
      const file = await open(argv.tokenFile, 'r');
      try {
        const stats = await file.stat();
        // A pipe (`--token-file <(…)`) or a device has no mode of its own to fix.
        if (stats.isFile()) mode = stats.mode;
        text = await file.readFile('utf8');
      } finally {
        await file.close();
      }
    } catch (error) {
      // The path is shown (redacted by main if it is a token pasted by mistake).
      throw new UsageError(
        `cannot read --token-file ${printable(argv.tokenFile)}: ${(error as NodeJS.ErrnoException).code ?? 'error'} (it takes the path of a file holding the token)`,
        'token_unreadable',
      );
    }
    const warnings = secretFileWarnings(argv.tokenFile, mode);
    const token = text.trim();
    if (token === '' || /\s/.test(token)) {
      throw new UsageError(
        `--token-file ${printable(argv.tokenFile)} must hold the token alone on one line`,
        'token_invalid',
      );
    }
    return { token, warnings };
  }
  const variable = env.CCS_TOKEN?.trim() || argv.tokenEnv === undefined ? 'CCS_TOKEN' : argv.tokenEnv;
  const token = env[variable]?.trim();
  if (!token) {
    throw new UsageError(
      variable === 'CCS_TOKEN'
        ? `no API token${emptyNote(env, 'CCS_TOKEN')}: ${ENV_HELP}`
        : `no API token: ${variable} (the config file's connection.tokenEnv) is ${env[variable] === undefined ? 'not set' : 'set but empty'}`,
      'token_missing',
    );
  }
  if (/[\s\x00-\x1f\x7f]/.test(token)) {
    throw new UsageError(`${variable} holds spaces or control characters; set it to the token alone`, 'token_invalid');
  }
  return { token, warnings: [] };
}

export async function resolveConnection(
  argv: { sandbox?: boolean | undefined; baseUrl?: string | undefined; tokenFile?: string | undefined; tokenEnv?: string | undefined } & NetworkArgv,
  env: NodeJS.ProcessEnv,
  signingKeyFile: string | undefined,
): Promise<Connection> {
  if (argv.sandbox) {
    if (argv.baseUrl !== undefined)
      throw new UsageError('--sandbox and --base-url exclude each other', 'bad_option');
    return { kind: 'sandbox' };
  }
  const baseUrl = argv.baseUrl ?? fromEnv(env, 'CCS_BASE_URL').value;
  if (baseUrl === undefined) {
    throw new UsageError(`no service base URL${emptyNote(env, 'CCS_BASE_URL')}: ${ENV_HELP}`, 'base_url_missing');
  }
  // One spelling from here on (no trailing slash), whatever was typed.
  const base = parseBaseUrl(baseUrl);
  const { token, warnings } = await readToken(argv, env);
  return { kind: 'service', baseUrl: base.text, token, warnings, signingKeyFile, network: await resolveNetwork(argv, env) };
}

function common(argv: RunFlags) {
  return {
    retries: check(
      z.number().int().min(0, '--retries must be 0 or more').max(20, '--retries must be at most 20'),
      argv.retries,
    ),
    timeoutMs: check(z.number().positive('--timeout must be positive').max(3600), argv.timeout) * 1000,
    quiet: argv.quiet === true,
    json: argv.json === true,
    configFile: argv.configFile,
    progressIntervalMs:
      check(z.number().positive('--progress-interval must be positive').max(3600), argv.progressInterval) * 1000,
  };
}

export async function resolveImportOptions(
  argv: ImportFlags,
  env: NodeJS.ProcessEnv,
  mode: { dryRun: boolean; commandLine: readonly string[] },
): Promise<ImportOptions> {
  if (argv.resume && argv.overwrite)
    throw new UsageError('--resume and --overwrite exclude each other', 'bad_option');
  const signingKeyFile = signingKeyFrom(argv, env);
  const matchService = mode.dryRun && argv.checkService === true;
  const connection = mode.dryRun && !matchService ? undefined : await connectionFor(argv, env, signingKeyFile, matchService);
  // validate --check-service only lists the service's clients: it signs nothing.
  if (!mode.dryRun && connection?.kind === 'service' && connection.signingKeyFile === undefined) {
    throw new UsageError(
      `no signing key${emptyNote(env, 'CCS_SIGNING_KEY_FILE')}: set CCS_SIGNING_KEY_FILE or --signing-key to the RSA-4096 private key PEM (ccs-bulk keygen makes one)`,
      'key_missing',
    );
  }
  const read: ReadOptions = {};
  if (argv.encoding !== undefined) read.encoding = argv.encoding;
  const delimiter = parseDelimiter(argv.delimiter);
  if (delimiter !== undefined) read.delimiter = delimiter;
  if (argv.sheet !== undefined) read.sheet = argv.sheet;
  if (argv.headerRow !== undefined) read.headerRow = check(positiveInt('--header-row', 2 ** 31), argv.headerRow);
  read.maxRecordSize = check(positiveInt('--max-record-size', 2 ** 30), argv.maxRecordSize);
  const field = argv.applicationDateField.trim();
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(field)) {
    throw new UsageError(`--application-date-field "${field}" is not a usable JSON field name`, 'bad_option');
  }
  return {
    ...common(argv),
    connection,
    scheme: { hash: argv.signatureHash, padding: argv.signaturePadding },
    run: {
      file: argv.file,
      results: argv.results ?? defaultResultsPath(argv.file, connection?.kind === 'sandbox'),
      failed: argv.failed,
      report: argv.report,
      resume: argv.resume === true,
      overwrite: argv.overwrite === true,
      acceptChangedSource: argv.acceptChangedSource === true,
      dryRun: mode.dryRun,
      // --map's fields over a --mapping file's.
      map: { ...(argv.mapping === undefined ? {} : readMappingFile(argv.mapping)), ...parseMap(argv.map) },
      dateFormat: argv.dateFormat,
      read,
      liquidityType: argv.liquidityType.trim(),
      concurrency: parseConcurrency(argv.concurrency),
      maxConcurrency: check(positiveInt('--max-concurrency', MAX_IN_FLIGHT), argv.maxConcurrency),
      rate:
        argv.rate === undefined ? undefined : check(z.number().positive('--rate must be positive'), argv.rate),
      maxErrors:
        argv.maxErrors === undefined ? undefined : check(positiveInt('--max-errors', 2 ** 31), argv.maxErrors),
      shard: resolveShard(argv, env),
      identity: parseIdentityFlag(argv.identity),
      ignoreColumns: parseIgnoreColumns(argv.ignoreColumn),
      heldCache: parseHeldCache(argv.heldCache),
      matchService,
    },
    applicationDateField: field,
    logFile: argv.logFile,
    saveMapping: argv.saveMapping,
    commandLine: mode.commandLine,
    acceptFailedRows: argv.acceptFailedRows === true,
  };
}

/** import's connection; validate's only with --check-service, whose refusal says why validate needs one. */
async function connectionFor(argv: ImportFlags, env: NodeJS.ProcessEnv, signingKeyFile: string | undefined, matchService: boolean): Promise<Connection> {
  try {
    return await resolveConnection(argv, env, signingKeyFile);
  } catch (error) {
    if (!matchService || !(error instanceof UsageError)) throw error;
    throw new UsageError(`--check-service asks the service, so validate needs its connection: ${error.message}`, error.code, { cause: error });
  }
}

/** `email` (also when absent), `none` or `column:HEADER`. */
function parseIdentityFlag(text: string | undefined): Identity {
  if (text === undefined) return DEFAULT_IDENTITY;
  const identity = parseIdentity(text.trim());
  if (identity === undefined || (identity.by === 'column' && identity.column.trim() === '')) {
    throw new UsageError(
      `--identity takes email (a person is their e-mail), none (no matching) or column:HEADER (a column such as column:Kundennr.), got "${text}"`,
      'bad_option',
    );
  }
  return identity;
}

/** --ignore-column headers, each named (the run checks they exist once the header is read). */
function parseIgnoreColumns(headers: readonly string[] | undefined): string[] {
  const list = [...(headers ?? [])];
  if (list.some((header) => header.trim() === '')) throw new UsageError('--ignore-column needs a header', 'bad_option');
  return list;
}

/** --held-cache FILE, or `none` (false: kept in memory); absent = the default file. */
function parseHeldCache(text: string | undefined): string | false | undefined {
  if (text === undefined) return undefined;
  const value = text.trim();
  if (value === '') throw new UsageError('--held-cache needs a file, or none', 'bad_option');
  return value === 'none' ? false : value;
}

/** --shard K/N, else CCS_SHARD, else --shards N with the index a Kubernetes Indexed Job sets (0-based). */
function resolveShard(argv: { shard?: string | undefined; shards?: number | undefined }, env: NodeJS.ProcessEnv): Shard | undefined {
  if (argv.shard !== undefined && argv.shards !== undefined) {
    throw new UsageError('give --shard K/N or --shards N, not both', 'bad_option');
  }
  if (argv.shard !== undefined) return parseShard(argv.shard);
  if (argv.shards === undefined) return env.CCS_SHARD ? parseShard(env.CCS_SHARD, 'CCS_SHARD') : undefined;
  const index = env.JOB_COMPLETION_INDEX;
  if (index === undefined || !/^\d+$/.test(index.trim())) {
    throw new UsageError('--shards N needs JOB_COMPLETION_INDEX (0-based, set by a Kubernetes Indexed Job); elsewhere use --shard K/N', 'bad_option');
  }
  return parseShard(`${Number(index) + 1}/${argv.shards}`, '--shards with JOB_COMPLETION_INDEX');
}

/** `auto` or a whole number of requests in flight. */
function parseConcurrency(text: string): number | 'auto' {
  const value = autoOrNumber(text, '--concurrency');
  return value === 'auto' ? value : check(positiveInt('--concurrency', 1024), value);
}

/** `auto` or a number, as typed (a config file gives a number); the range is checked after. */
function autoOrNumber(typed: string | number, flag: string): number | 'auto' {
  if (typeof typed === 'number') return typed;
  const value = typed.trim().toLowerCase();
  if (value === 'auto') return 'auto';
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes 'auto' or a whole number, got "${typed}"`, 'bad_option');
  return Number(value);
}

/** What the command runs: the export's settings plus how this run treats its files. */
export interface ExportRunOptions extends ExportOptions {
  sinceLast: string | undefined;
  newSinceLast: string | undefined;
  /** Permission bits of the report file; undefined: the umask's. */
  fileMode: number | undefined;
  overwrite: boolean;
  gzip: boolean;
  logFile: string | undefined;
  report: string | undefined;
}

export interface ResolvedExportOptions extends CommonOptions {
  export: ExportRunOptions;
}

export async function resolveExportOptions(
  argv: ExportFlags,
  env: NodeJS.ProcessEnv,
): Promise<ResolvedExportOptions> {
  const connection = await resolveConnection(argv, env, undefined);
  return {
    ...common(argv),
    connection,
    scheme: SERVICE_DEFAULTS.scheme,
    export: parseExportOptions(argv),
  };
}

/** Export flags → ExportOptions, checked as the library checks its settings, named as flags. */
export function parseExportOptions(argv: ExportFlags): ExportRunOptions {
  const out = argv.out.trim();
  if (out === '') throw new UsageError("--out needs a file name, or '-' for stdout", 'bad_option');
  const sinceLast = stateFlag('since-last', argv.sinceLast, out);
  const newSinceLast = stateFlag('new-since-last', argv.newSinceLast, out);
  if (sinceLast !== undefined && argv.createdTo !== undefined)
    throw new UsageError('--since-last pins --created-to itself: drop --created-to', 'bad_option');
  if (sinceLast !== undefined && newSinceLast !== undefined) {
    throw new UsageError(
      '--since-last (clients created since the last run) and --new-since-last (clients that entered the filter since the last run) exclude each other: pick one',
      'bad_option',
    );
  }
  return {
    out,
    sinceLast,
    newSinceLast,
    fileMode: parseFileMode(argv.fileMode),
    overwrite: argv.overwrite === true,
    gzip: argv.gzip === true,
    logFile: argv.logFile,
    report: argv.report,
    ...checkExportSettings(
      {
        format: argv.format,
        columns: argv.columns,
        bom: argv.bom === true,
        escapeFormulas: argv.escapeFormulas,
        status: argv.status,
        creditStatus: argv.creditStatus,
        createdFrom: argv.createdFrom,
        createdTo: argv.createdTo,
        period: argv.period,
        country: argv.country,
        delimiter: argv.delimiter,
        csvDates: argv.csvDates,
        sheetName: argv.sheetName,
        summarySheet: argv.summarySheet,
        summaryFile: argv.summaryFile,
        split: argv.split,
        sort: argv.sort,
        timeZone: argv.timezone,
        datesInTimeZone: argv.datesInTimezone === true,
        direction: argv.direction,
        pageSize: argv.pageSize,
        prefetch: autoOrNumber(argv.prefetch, '--prefetch'),
        maxPrefetch: argv.maxPrefetch,
      },
      'flag',
      out,
    ),
  };
}

/** `--since-last` / `--new-since-last`: a state file name, and a file output. */
function stateFlag(flag: string, value: string | undefined, out: string): string | undefined {
  const path = value?.trim();
  if (path === undefined) return undefined;
  if (path === '') throw new UsageError(`--${flag} needs a state file name`, 'bad_option');
  if (out === '-') throw new UsageError(`--${flag} needs --out FILE: the state moves on only once a file is in place`, 'bad_option');
  return path;
}

/** `640`, `0640`, `0o640` → 0o640; the report file's mode, never more than rw for anyone. */
export function parseFileMode(text: string | number | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(?:0o?)?([0-7]{3})$/i.exec(String(text).trim());
  const mode = match ? Number.parseInt(match[1]!, 8) : Number.NaN;
  if (Number.isNaN(mode) || (mode & 0o111) !== 0 || (mode & 0o600) !== 0o600) {
    throw new UsageError(
      `--file-mode ${JSON.stringify(String(text))}: give octal permission bits with read and write for the owner and no execute bit, e.g. 640 (group reads) or 644 (everyone reads)`,
      'bad_option',
    );
  }
  return mode;
}
