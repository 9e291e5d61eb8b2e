/**
 * The flags of each command, as yargs definitions: names, types, groups, help text. Defaults
 * come from each command's defaults.ts; options.ts and config.ts resolve the values.
 */
import type { Argv } from 'yargs';
import { EXPORT_DEFAULTS, EXPORT_FORMATS } from '../export/defaults.js';
import { DATE_FORMATS, IMPORT_DEFAULTS } from '../import/defaults.js';
import { PROGRESS_LINE_INTERVAL_S } from '../infra/progress-report.js';
import { DEFAULT_FAULTS } from '../sandbox/faults.js';
import { SANDBOX_DEFAULTS } from '../sandbox/defaults.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';

/** config.ts's CONFIG_FILE, repeated: importing config.ts would load zod for `--help`. */
const CONFIG_FILE = 'ccs-bulk.config.json';

const CONNECTION = 'Connection:';
const INPUT = 'Input:';
const OUTPUT = 'Output:';
const SENDING = 'Sending:';
const FAULTS = 'Faults:';
const SERVER = 'Server:';

/** @internal yargs types stay out of the published declarations. */
export function connectionFlags<T>(y: Argv<T>) {
  return y
    .option('base-url', {
      type: 'string',
      group: CONNECTION,
      describe: 'service base URL (env CCS_BASE_URL)',
    })
    .option('token-file', {
      type: 'string',
      group: CONNECTION,
      describe: 'file holding the API token (or env CCS_TOKEN; never a bare flag)',
    })
    .option('sandbox', {
      type: 'boolean',
      group: CONNECTION,
      describe: 'start the emulator in-process with a fresh key pair and token',
    })
    .option('timeout', {
      type: 'number',
      group: CONNECTION,
      defaultDescription: String(SERVICE_DEFAULTS.timeoutMs / 1000),
      describe: 'seconds to wait for a response',
    })
    .option('retries', {
      type: 'number',
      group: CONNECTION,
      defaultDescription: String(SERVICE_DEFAULTS.retries),
      describe: 'retries per request',
    })
    .option('proxy', {
      type: 'string',
      group: CONNECTION,
      describe: 'HTTP(S) proxy URL for every request (env CCS_PROXY; HTTPS_PROXY/NO_PROXY are honoured without it)',
    })
    .option('ca-file', {
      type: 'string',
      group: CONNECTION,
      describe: "PEM CA bundle trusted besides Node's roots (env CCS_CA_FILE)",
    })
    .option('client-cert', {
      type: 'string',
      group: CONNECTION,
      describe: 'PEM client certificate for mutual TLS (env CCS_CLIENT_CERT_FILE)',
    })
    .option('client-key', {
      type: 'string',
      group: CONNECTION,
      describe: 'PEM private key of --client-cert (env CCS_CLIENT_KEY_FILE)',
    })
    .option('outage-timeout', {
      type: 'number',
      group: CONNECTION,
      defaultDescription: String(SERVICE_DEFAULTS.outageTimeoutS),
      describe: 'seconds the service may stay down mid-run (the run pauses) before it stops, resumable',
    })
    .option('config', {
      type: 'string',
      requiresArg: true,
      describe: `config file: connection settings, defaults, reports (env CCS_CONFIG; default ./${CONFIG_FILE} if present)`,
    })
    .option('print-config', {
      type: 'boolean',
      describe: 'print the resolved settings as JSON (where each came from; secrets redacted) and exit',
    })
    .option('quiet', { type: 'boolean', alias: 'q', describe: 'no progress on stderr' })
    .option('progress-interval', {
      type: 'number',
      defaultDescription: String(PROGRESS_LINE_INTERVAL_S),
      describe: 'seconds between plain progress lines when stderr is not a terminal',
    })
    .option('json', {
      type: 'boolean',
      describe: 'print the summary as JSON on stdout (stderr when data goes there)',
    });
}

/** The signature scheme, which the service does not publish: the client's and the sandbox's. */
function schemeFlags<T>(y: Argv<T>, group: string) {
  return y
    .option('signature-hash', { choices: ['sha256', 'sha512'] as const, default: SERVICE_DEFAULTS.scheme.hash, group })
    .option('signature-padding', { choices: ['pkcs1', 'pss'] as const, default: SERVICE_DEFAULTS.scheme.padding, group });
}

/** The client's scheme: defaults applied after the config file (config.ts), shown in --help. */
function clientSchemeFlags<T>(y: Argv<T>, group: string) {
  return y
    .option('signature-hash', { choices: ['sha256', 'sha512'] as const, defaultDescription: SERVICE_DEFAULTS.scheme.hash, group })
    .option('signature-padding', { choices: ['pkcs1', 'pss'] as const, defaultDescription: SERVICE_DEFAULTS.scheme.padding, group });
}

function signingFlags<T>(y: Argv<T>) {
  return clientSchemeFlags(y, CONNECTION).option('signing-key', {
    type: 'string',
    group: CONNECTION,
    describe: 'RSA-4096 private key PEM file (env CCS_SIGNING_KEY_FILE)',
  });
}

/** @internal How the input is read and what its columns mean: import's and validate's Input group (verify's too). */
export function inputFlags<T>(y: Argv<T>) {
  return y
    .option('map', {
      type: 'string',
      array: true,
      group: INPUT,
      describe: 'field=Header for a column the matcher does not find (repeatable)',
    })
    .option('ignore-column', {
      type: 'string',
      array: true,
      requiresArg: true,
      group: INPUT,
      describe: 'drop this unmapped column (its header) on purpose, repeatable: one that looks like a field stops the import otherwise',
    })
    .option('identity', {
      type: 'string',
      requiresArg: true,
      defaultDescription: 'email',
      group: INPUT,
      describe: 'who a person is: their e-mail (default), a column (column:Kundennr.), or none',
    })
    .option('date-format', {
      choices: DATE_FORMATS,
      defaultDescription: IMPORT_DEFAULTS.dateFormat,
      group: INPUT,
      describe: 'day/month order of dates not in ISO form; auto: from the file (a day over 12, else the headers\' language)',
    })
    .option('encoding', { type: 'string', group: INPUT, describe: 'input encoding (detected when absent)' })
    .option('delimiter', { type: 'string', group: INPUT, describe: 'field delimiter (detected when absent)' })
    .option('sheet', { type: 'string', group: INPUT, describe: 'spreadsheet sheet name or 1-based number' })
    .option('header-row', {
      type: 'number',
      group: INPUT,
      describe: 'the header\'s row (line) number, when rows above it are not data (found when absent)',
    })
    .option('max-record-size', {
      type: 'number',
      defaultDescription: String(IMPORT_DEFAULTS.maxRecordSize),
      group: INPUT,
      describe: 'bytes allowed in one record',
    });
}

/** @internal yargs types stay out of the published declarations. */
export function importFlags<T>(y: Argv<T>) {
  return inputFlags(signingFlags(connectionFlags(y)))
    .positional('file', { type: 'string', demandOption: true, describe: 'CSV or .xlsx file' })
    .option('results', {
      type: 'string',
      group: OUTPUT,
      describe: 'results file (default <file>.results.csv)',
    })
    .option('resume', { type: 'boolean', group: OUTPUT, describe: 'continue an existing results file' })
    .option('overwrite', { type: 'boolean', group: OUTPUT, describe: 'replace an existing results file' })
    .option('accept-changed-source', {
      type: 'boolean',
      group: OUTPUT,
      describe: 'with --resume: go on although rows of the file changed since the last run',
    })
    .option('failed', {
      type: 'string',
      group: OUTPUT,
      describe: 'write invalid and failed rows here, ready to fix',
    })
    .option('accept-failed-rows', {
      type: 'boolean',
      group: OUTPUT,
      describe: 'exit 0 when the only rows not imported are invalid or refused by the service (4xx no retry changes): a Job completes, the rows are in --failed',
    })
    .option('report', {
      type: 'string',
      group: OUTPUT,
      describe: 'write a review page here: one self-contained HTML file (mapping, counts, problems by kind, suggestions)',
    })
    .option('mapping', {
      type: 'string',
      requiresArg: true,
      group: INPUT,
      describe: 'read the column mapping from this file (one --save-mapping wrote); --map entries go over it',
    })
    .option('save-mapping', {
      type: 'string',
      requiresArg: true,
      group: OUTPUT,
      describe: 'write the column mapping this run resolved (templates included) to this file, for --mapping',
    })
    .option('log-file', {
      type: 'string',
      group: OUTPUT,
      describe: 'append one JSON line per request attempt (with its row number) and run event (no secrets, no client data)',
    })
    .option('application-date-field', {
      type: 'string',
      defaultDescription: IMPORT_DEFAULTS.applicationDateField,
      group: SENDING,
      describe: 'wire name of the application date',
    })
    .option('liquidity-type', {
      type: 'string',
      defaultDescription: IMPORT_DEFAULTS.liquidityType,
      group: SENDING,
      describe: 'liquidity_type for rows without that column',
    })
    .option('concurrency', {
      type: 'string',
      defaultDescription: String(IMPORT_DEFAULTS.concurrency),
      group: SENDING,
      describe: "requests in flight: 'auto' finds it while the run goes, a number pins it",
    })
    .option('max-concurrency', {
      type: 'number',
      defaultDescription: "the machine's bound",
      group: SENDING,
      describe: 'upper bound for --concurrency auto (a safety bound, not a pace)',
    })
    .option('rate', { type: 'number', group: SENDING, describe: 'at most N requests per second' })
    .option('shard', {
      type: 'string',
      group: SENDING,
      describe: 'K/N: send only shard K of N of the rows (env CCS_SHARD); results get .shard-K-of-N',
    })
    .option('shards', {
      type: 'number',
      group: SENDING,
      describe: 'N shards, this one from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)',
    })
    .option('max-errors', { type: 'number', group: SENDING, describe: 'stop (exit 3) after N invalid or failed rows' });
}

/** @internal import's own: validate keeps nothing between runs. */
export function heldCacheFlag<T>(y: Argv<T>) {
  return y.option('held-cache', {
    type: 'string',
    requiresArg: true,
    group: SENDING,
    describe: "where the service's e-mails are kept between runs (default: the user's cache folder; none: keep in memory)",
  });
}

/** @internal validate's own: an import always asks the service. */
export function checkServiceFlag<T>(y: Argv<T>) {
  return y.option('check-service', {
    type: 'boolean',
    group: CONNECTION,
    describe: 'also ask the service which e-mails it already holds (needs the connection settings, like import)',
  });
}

/** The export's calendar: a period in words, the time zone of the window, names and dates. */
function periodFlags<T>(y: Argv<T>) {
  return y
    .option('period', {
      type: 'string',
      requiresArg: true,
      describe: 'a calendar window instead of --created-from/--created-to: previous-day, previous-week (ISO, Monday–Sunday), previous-month, last-7-days, month-to-date, or 2026-02, 2026-W07, 2026-02-14',
    })
    .option('timezone', {
      type: 'string',
      requiresArg: true,
      defaultDescription: 'UTC',
      describe: 'IANA time zone (Europe/Berlin) of the window, --period and {date} in --out; daylight saving included',
    })
    .option('dates-in-timezone', {
      type: 'boolean',
      group: OUTPUT,
      describe: 'write created_at in --timezone, with its offset, instead of UTC',
    });
}

/** @internal yargs types stay out of the published declarations. */
export function exportFlags<T>(y: Argv<T>) {
  return periodFlags(connectionFlags(y))
    .option('out', {
      type: 'string',
      defaultDescription: EXPORT_DEFAULTS.out,
      requiresArg: true,
      group: OUTPUT,
      describe: "output file, '-' for stdout; {date} {datetime} {report} {period} are filled in (dates in --timezone)",
    })
    .option('format', {
      choices: EXPORT_FORMATS,
      group: OUTPUT,
      describe:
        "default: from the --out name (.xlsx, .jsonl), else csv; csv-semicolon: ';' and a UTF-8 BOM, for Excel set to German, French, Spanish, Italian, Portuguese or Dutch",
    })
    .option('columns', { type: 'string', group: OUTPUT, describe: "comma list of columns, in order; a header after a colon: 'id:Client ID,credit_status:Credit status'" })
    .option('delimiter', { type: 'string', requiresArg: true, group: OUTPUT, describe: "CSV cell separator: , ; tab | (';' is --format csv-semicolon, BOM included)" })
    .option('csv-dates', { choices: ['iso', 'spreadsheet'] as const, group: OUTPUT, describe: "CSV created_at: iso (default) or spreadsheet ('2025-01-31 18:00:00', UTC: a date in Excel, LibreOffice, Google Sheets)" })
    .option('sheet-name', { type: 'string', requiresArg: true, group: OUTPUT, describe: "xlsx: the data sheet's name (default clients)" })
    .option('summary-sheet', { choices: ['first', 'last', 'none'] as const, group: OUTPUT, describe: 'xlsx: a Summary sheet (window, filters, counts) after the data (last, default) or first; the workbook opens on it' })
    .option('summary-file', { type: 'boolean', group: OUTPUT, describe: 'also write the summary as NAME.summary.csv beside --out' })
    .option('split', { type: 'string', requiresArg: true, group: OUTPUT, describe: 'rows:N, month or status: several sheets (xlsx) or files NAME-PART.csv (CSV, JSONL)' })
    .option('sort', { type: 'string', requiresArg: true, group: OUTPUT, describe: 'order the rows by a column, COLUMN or COLUMN:desc (sorted here, on disk: flat memory)' })
    .option('bom', { type: 'boolean', group: OUTPUT, describe: 'start the CSV with a UTF-8 BOM (Excel)' })
    .option('escape-formulas', {
      type: 'boolean',
      defaultDescription: String(EXPORT_DEFAULTS.escapeFormulas),
      group: OUTPUT,
      describe: "CSV: prefix cells starting with = + - @ tab CR with ' (--no-escape-formulas to turn off)",
    })
    .option('status', { type: 'string', describe: 'comma list of client statuses' })
    .option('credit-status', { type: 'string', describe: 'comma list: active,inactive' })
    .option('country', { type: 'string', requiresArg: true, describe: 'comma list of ISO codes or names (DE,FR): filtered here, the whole window is paged' })
    .option('created-from', { type: 'string', describe: 'ISO date or date-time, inclusive' })
    .option('created-to', {
      type: 'string',
      describe: 'ISO date or date-time, inclusive (a date means the whole day)',
    })
    .option('direction', { choices: ['asc', 'desc'] as const, defaultDescription: EXPORT_DEFAULTS.direction })
    .option('page-size', { type: 'number', defaultDescription: String(EXPORT_DEFAULTS.pageSize), describe: 'clients per page' })
    .option('prefetch', {
      type: 'string',
      defaultDescription: String(EXPORT_DEFAULTS.prefetch),
      describe: "pages fetched ahead of the writer: 'auto' finds it while the export runs, a number pins it",
    })
    .option('max-prefetch', {
      type: 'number',
      defaultDescription: "the machine's bound",
      describe: 'upper bound for --prefetch auto (a safety bound, not a pace)',
    })
    .option('overwrite', { type: 'boolean', group: OUTPUT, describe: 'replace an existing --out file (refused otherwise)' })
    .option('gzip', { type: 'boolean', group: OUTPUT, describe: 'gzip the file (implied by an --out name ending in .gz)' })
    .option('log-file', {
      type: 'string',
      group: OUTPUT,
      describe: 'append one JSON line per request attempt and run event (no secrets, no client data)',
    })
    .option('report', {
      type: 'string',
      requiresArg: true,
      describe: 'run the named report of the config file (its filters, columns, format, --out, state)',
    })
    .option('since-last', {
      type: 'string',
      group: OUTPUT,
      describe: 'state file: export only clients created since the last successful run (then record this one)',
    })
    .option('new-since-last', {
      type: 'string',
      group: OUTPUT,
      describe: 'state file: export the clients that entered the filter since the last successful run (new, or whose status changed)',
    })
    .option('file-mode', {
      type: 'string',
      group: OUTPUT,
      describe: "the report file's permissions, octal (e.g. 640); default: the umask's, like any new file",
    });
}

/** The sandbox's injected faults: latency, errors, throttling, cut connections, outages. */
function sandboxFaultFlags<T>(y: Argv<T>) {
  return y
    .option('latency', { type: 'number', group: FAULTS, describe: 'ms added to every request' })
    .option('jitter', { type: 'number', group: FAULTS, describe: 'ms of random extra latency' })
    .option('fail-rate', { type: 'number', group: FAULTS, describe: 'probability of a 5xx' })
    .option('throttle-rate', { type: 'number', group: FAULTS, describe: 'probability of a 429 with Retry-After' })
    .option('rate-limit', { type: 'number', group: FAULTS, describe: 'requests per second before 429' })
    .option('drop-rate', {
      type: 'number',
      group: FAULTS,
      describe: 'probability a connection is cut before handling',
    })
    .option('reset-rate', {
      type: 'number',
      group: FAULTS,
      describe: 'probability a connection is cut after the client was created',
    })
    .option('retry-after', {
      type: 'number',
      group: FAULTS,
      default: DEFAULT_FAULTS.retryAfterSeconds,
      describe: 'seconds sent in Retry-After',
    })
    .option('auth-fail-after', { type: 'number', group: FAULTS, describe: 'answer 401 once N clients were created' })
    .option('outage', {
      type: 'string',
      group: FAULTS,
      describe: 'AT:FOR seconds from the first request (add :drop to cut connections instead of 503)',
    })
    .option('outage-from-start', {
      type: 'boolean',
      group: FAULTS,
      describe: "--outage's AT counts from the sandbox's start, not from the first request",
    })
    .option('outage-after-creates', {
      type: 'number',
      requiresArg: true,
      group: FAULTS,
      describe: "--outage's AT counts from the Nth client created (e.g. --outage 0:30 --outage-after-creates 100)",
    })
    .option('latency-schedule', {
      type: 'string',
      group: FAULTS,
      describe: 'MS@SECONDS,…: latency that changes over time from the first request (e.g. 20@0,300@10,20@20)',
    });
}

/** @internal yargs types stay out of the published declarations. */
export function sandboxFlags<T>(y: Argv<T>) {
  const flags = y
    .option('port', {
      type: 'number',
      group: SERVER,
      default: SANDBOX_DEFAULTS.commandPort,
      describe: '0 picks a free port',
    })
    .option('host', { type: 'string', group: SERVER, default: SANDBOX_DEFAULTS.host, describe: 'interface to listen on' })
    .option('base-path', {
      type: 'string',
      group: SERVER,
      describe: 'serve under a path prefix, as behind a gateway (/ccs: the base URL ends in /ccs)',
    })
    .option('token', {
      type: 'string',
      group: SERVER,
      describe: 'bearer token to accept (default: a fresh lk_sandbox_ token)',
    })
    .option('public-key', { type: 'string', group: SERVER, describe: 'SPKI PEM file to verify signatures with' })
    .option('seed', { type: 'number', group: SERVER, describe: 'create N varied clients at start' })
    .option('seed-until', {
      type: 'string',
      requiresArg: true,
      group: SERVER,
      describe: "the seeded clients' two years end here: now (the sandbox clock's) or an ISO instant (default: 2026-01-01)",
    })
    .option('clock', {
      type: 'string',
      requiresArg: true,
      group: SERVER,
      describe: 'start the sandbox clock at this ISO instant (it runs on): created clients get its time; POST /_sandbox/clock moves it',
    })
    .option('seed-random', {
      type: 'number',
      group: SERVER,
      default: SANDBOX_DEFAULTS.seedRandom,
      describe: 'PRNG seed for seeding and faults',
    })
    .option('page-base', {
      choices: [0, 1] as const,
      group: SERVER,
      default: SANDBOX_DEFAULTS.pageBase,
      describe: 'first page number',
    })
    .option('max-page-size', {
      type: 'number',
      group: SERVER,
      default: SANDBOX_DEFAULTS.maxPageSize,
      describe: 'largest size served',
    })
    .option('application-date-field', {
      type: 'string',
      default: SANDBOX_DEFAULTS.applicationDateField,
      describe: 'wire name of the application date',
    })
    .option('tls', {
      type: 'boolean',
      group: SERVER,
      describe: 'serve HTTPS with a CA made for the run (prints NODE_EXTRA_CA_CERTS)',
    })
    .option('tls-client-cert', {
      type: 'boolean',
      group: SERVER,
      describe: 'with --tls: require a client certificate (one is issued)',
    })
    .option('tls-client-ca', {
      type: 'string',
      group: SERVER,
      describe: 'with --tls: also accept client certificates from this CA (PEM)',
    })
    .option('verbose', { type: 'boolean', describe: 'one line per request on stderr' })
    .option('verify-signatures', {
      type: 'boolean',
      default: SANDBOX_DEFAULTS.verifySignatures,
      describe: '--no-verify-signatures for benchmarks of unsigned tools only',
    });
  return schemeFlags(sandboxFaultFlags(flags), SERVER);
}

/** @internal yargs types stay out of the published declarations. */
export function checkFlags<T>(y: Argv<T>) {
  return signingFlags(connectionFlags(y)).option('detect-signature', {
    type: 'boolean',
    group: CONNECTION,
    describe: 'try sha256/sha512 × pkcs1/pss and report which the service accepts',
  });
}

