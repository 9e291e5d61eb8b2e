/**
 * yargs definitions only. Each command's code is imported lazily so `ccs-bulk --help`
 * loads nothing heavy; options are resolved once, in options.ts.
 */
import yargs, { type Argv } from 'yargs';
import { UsageError } from './errors.js';
import { EXPORT_DEFAULTS, EXPORT_FORMATS } from './export/defaults.js';
import { DATE_FORMATS, IMPORT_DEFAULTS } from './import/defaults.js';
import type { Io } from './io.js';
import type { CheckFlags, ExportFlags, ImportFlags } from './options.js';
import { PROGRESS_LINE_INTERVAL_S } from './progress-report.js';
import { DEFAULT_FAULTS } from './sandbox/faults.js';
import { SANDBOX_DEFAULTS } from './sandbox/defaults.js';
import { SERVICE_DEFAULTS } from './service/defaults.js';

/** config.ts's CONFIG_FILE, repeated: importing config.ts would load zod for `--help`. */
const CONFIG_FILE = 'ccs-bulk.config.json';

const CONNECTION = 'Connection:';
const INPUT = 'Input:';
const OUTPUT = 'Output:';
const SENDING = 'Sending:';
const FAULTS = 'Faults:';
const SERVER = 'Server:';

function connectionFlags<T>(y: Argv<T>) {
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

function importFlags<T>(y: Argv<T>) {
  return signingFlags(connectionFlags(y))
    .positional('file', { type: 'string', demandOption: true, describe: 'CSV or .xlsx file' })
    .option('results', {
      type: 'string',
      group: OUTPUT,
      describe: 'results file (default <file>.results.csv)',
    })
    .option('resume', { type: 'boolean', group: OUTPUT, describe: 'continue an existing results file' })
    .option('overwrite', { type: 'boolean', group: OUTPUT, describe: 'replace an existing results file' })
    .option('failed', {
      type: 'string',
      group: OUTPUT,
      describe: 'write invalid and failed rows here, ready to fix',
    })
    .option('log-file', {
      type: 'string',
      group: OUTPUT,
      describe: 'append one JSON line per request attempt (with its row number) and run event (no secrets, no client data)',
    })
    .option('map', {
      type: 'string',
      array: true,
      group: INPUT,
      describe: 'field=Header for a column the matcher does not find (repeatable)',
    })
    .option('date-format', { choices: DATE_FORMATS, defaultDescription: IMPORT_DEFAULTS.dateFormat, group: INPUT })
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
      defaultDescription: String(IMPORT_DEFAULTS.maxConcurrency),
      group: SENDING,
      describe: "upper bound for --concurrency auto",
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

function exportFlags<T>(y: Argv<T>) {
  return connectionFlags(y)
    .option('out', {
      type: 'string',
      defaultDescription: EXPORT_DEFAULTS.out,
      requiresArg: true,
      group: OUTPUT,
      describe: "output file, '-' for stdout; {date} {datetime} {report} are filled in (UTC)",
    })
    .option('format', {
      choices: EXPORT_FORMATS,
      group: OUTPUT,
      describe: 'default: from the --out name (.xlsx, .jsonl), else csv',
    })
    .option('columns', { type: 'string', group: OUTPUT, describe: 'comma list of columns, in order' })
    .option('bom', { type: 'boolean', group: OUTPUT, describe: 'start the CSV with a UTF-8 BOM (Excel)' })
    .option('escape-formulas', {
      type: 'boolean',
      defaultDescription: String(EXPORT_DEFAULTS.escapeFormulas),
      group: OUTPUT,
      describe: "CSV: prefix cells starting with = + - @ tab CR with ' (--no-escape-formulas to turn off)",
    })
    .option('status', { type: 'string', describe: 'comma list of client statuses' })
    .option('credit-status', { type: 'string', describe: 'comma list: active,inactive' })
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
      defaultDescription: String(EXPORT_DEFAULTS.maxPrefetch),
      describe: 'upper bound for --prefetch auto',
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
    });
}

function sandboxFlags<T>(y: Argv<T>) {
  const flags = y
    .option('port', {
      type: 'number',
      group: SERVER,
      default: SANDBOX_DEFAULTS.commandPort,
      describe: '0 picks a free port',
    })
    .option('host', { type: 'string', group: SERVER, default: SANDBOX_DEFAULTS.host, describe: 'interface to listen on' })
    .option('token', {
      type: 'string',
      group: SERVER,
      describe: 'bearer token to accept (default: a fresh lk_sandbox_ token)',
    })
    .option('public-key', { type: 'string', group: SERVER, describe: 'SPKI PEM file to verify signatures with' })
    .option('seed', { type: 'number', group: SERVER, describe: 'create N varied clients at start' })
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
    .option('outage', {
      type: 'string',
      group: FAULTS,
      describe: 'AT:FOR seconds from the first request (add :drop to cut connections instead of 503)',
    })
    .option('latency-schedule', {
      type: 'string',
      group: FAULTS,
      describe: 'MS@SECONDS,…: latency that changes over time from the first request (e.g. 20@0,300@10,20@20)',
    })
    .option('verbose', { type: 'boolean', describe: 'one line per request on stderr' })
    .option('verify-signatures', {
      type: 'boolean',
      default: SANDBOX_DEFAULTS.verifySignatures,
      describe: '--no-verify-signatures for benchmarks of unsigned tools only',
    });
  return schemeFlags(flags, SERVER);
}

/** Drops the keys whose value is undefined: optional options stay absent, not undefined. */
function definedOnly<T extends object>(values: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as T;
}

type ImportArgv = Awaited<ReturnType<typeof importFlags>['argv']>;

/** What the config layer reads of any service command's arguments. */
interface RawArgv {
  config?: string | undefined;
  report?: string | undefined;
  printConfig?: boolean | undefined;
  sandbox?: boolean | undefined;
  tokenFile?: string | undefined;
}

function checkFlags<T>(y: Argv<T>) {
  return signingFlags(connectionFlags(y)).option('detect-signature', {
    type: 'boolean',
    group: CONNECTION,
    describe: 'try sha256/sha512 × pkcs1/pss and report which the service accepts',
  });
}

/** Parses argv and runs the command; resolves to the command's exit code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let exitCode = 0;
  /** flags > env > config file > defaults, once; `--print-config` stops here. */
  const layered = async <T>(args: RawArgv, command: 'import' | 'export' | 'check'): Promise<T | undefined> => {
    const { layerConfig, formatResolved, checkLayered } = await import('./config.js');
    const layers = await layerConfig<T>(args, env, command);
    if (args.printConfig !== true) return layers.flags;
    await checkLayered(command, layers.flags, env);
    io.stdout.write(formatResolved(layers));
    return undefined;
  };
  const importOrValidate = async (args: ImportArgv, dryRun: boolean) => {
    const flags = await layered<ImportFlags>(args, 'import');
    if (flags === undefined) return 0;
    const { resolveImportOptions } = await import('./options.js');
    const { runImport } = await import('./commands/import.js');
    return runImport(await resolveImportOptions(flags, env, { dryRun, commandLine: argv }), io);
  };
  await yargs(argv)
    .scriptName('ccs-bulk')
    .usage(
      '$0 <command> [options]\n\nMove client profiles between spreadsheets and the Client Credit Service.',
    )
    .command(
      'import <file>',
      'CSV or .xlsx → Create Client, with a results file',
      (y) =>
        importFlags(y)
          .option('dry-run', { type: 'boolean', describe: 'check everything, send nothing' })
          .example('$0 import clients.csv --sandbox', 'rehearse against an in-process sandbox, no configuration')
          .example('$0 import clients.csv --failed fix-me.csv', 'send every row; the rows to fix go to fix-me.csv')
          .example('$0 import clients.csv --resume', 'continue after a crash, Ctrl-C or a stop'),
      async (args) => {
        exitCode = await importOrValidate(args, args.dryRun === true);
      },
    )
    .command(
      'validate <file>',
      'read and check a file like import, send nothing (= import --dry-run)',
      (y) =>
        importFlags(y)
          .example('$0 validate clients.csv', 'print the plan (encoding, delimiter, columns) and check every row')
          .example("$0 validate export.csv --delimiter ';' --encoding windows-1252", 'override what was detected')
          .example("$0 validate people.xlsx --sheet 2 --map 'name=Legal name'", 'a sheet, and a column not recognised'),
      async (args) => {
        exitCode = await importOrValidate(args, true);
      },
    )
    .command(
      'export',
      'List Clients (filtered, all pages) → CSV, JSONL or an xlsx report',
      (y) =>
        exportFlags(y)
          .example('$0 export --out clients.csv', 'every client, CSV, written atomically')
          .example('$0 export --status approved --out approved.xlsx', 'an xlsx report: bold frozen header, autofilter')
          .example(
            '$0 export --created-from 2025-01-01 --created-to 2025-01-31 --bom --out jan.csv',
            'all of January (UTC), for Excel',
          ),
      async (args) => {
        const flags = await layered<ExportFlags>(args, 'export');
        if (flags === undefined) return;
        const { resolveExportOptions } = await import('./options.js');
        const { runExport } = await import('./commands/export.js');
        exitCode = await runExport(await resolveExportOptions(flags, env), io);
      },
    )
    .command(
      'sandbox',
      'run a local emulator of the service, for rehearsals and tests',
      (y) =>
        sandboxFlags(y)
          .example('$0 sandbox --seed 100', 'serve 100 varied clients on :4010; prints the export line to paste')
          .example('$0 sandbox --port 0 --latency 50 --fail-rate 0.05', 'a free port, a slow and flaky service')
          .example('$0 sandbox --reset-rate 0.05', 'cut 5% of connections after creating the client'),
      async (args) => {
        const { runSandbox } = await import('./commands/sandbox.js');
        // Flag names → the library's option names, once.
        await runSandbox(
          definedOnly({
            port: args.port,
            host: args.host,
            token: args.token,
            publicKeyFile: args.publicKey,
            seed: args.seed,
            seedRandom: args.seedRandom,
            pageBase: args.pageBase,
            maxPageSize: args.maxPageSize,
            latencyMs: args.latency,
            jitterMs: args.jitter,
            failRate: args.failRate,
            throttleRate: args.throttleRate,
            rateLimit: args.rateLimit,
            dropRate: args.dropRate,
            resetRate: args.resetRate,
            retryAfterSeconds: args.retryAfter,
            authFailAfter: args.authFailAfter,
            applicationDateField: args.applicationDateField,
            verbose: args.verbose,
            tls: args.tls,
            tlsClientCert: args.tlsClientCert,
            tlsClientCa: args.tlsClientCa,
            outage: args.outage,
            latencySchedule: args.latencySchedule,
            verifySignatures: args.verifySignatures,
            signature: { hash: args.signatureHash, padding: args.signaturePadding },
          }),
          io,
        );
      },
    )
    .command(
      'check',
      'preflight against the configured service: network, TLS, proxy, token, page base, clock, key, signature',
      (y) =>
        checkFlags(y)
          .example('$0 check', 'every line ok before a migration (CCS_BASE_URL, CCS_TOKEN, CCS_SIGNING_KEY_FILE)')
          .example('$0 check --detect-signature', 'find the signature scheme the service accepts')
          .example('$0 check --proxy http://proxy.corp:3128 --ca-file corp-ca.pem --json', 'behind a proxy and a company CA, for a script'),
      async (args) => {
        const flags = await layered<CheckFlags>(args, 'check');
        if (flags === undefined) return;
        const { resolveCheckOptions } = await import('./check/options.js');
        const { runCheck } = await import('./commands/check.js');
        exitCode = await runCheck(await resolveCheckOptions(flags, env), io);
      },
    )
    .command('results', "work with results files: merge the shards' files (--shard) into one", (y) =>
      y
        .command(
          'merge <files..>',
          "combine the shards' results files into one, in row order, each row once",
          (m) =>
            m
              .positional('files', { type: 'string', array: true, demandOption: true })
              .option('out', { type: 'string', demandOption: true, requiresArg: true, describe: 'the merged results file (must not exist)' })
              .option('json', { type: 'boolean', default: false, describe: 'print the summary as JSON on stdout' })
              .example('$0 results merge clients.results.shard-*-of-3.csv --out clients.results.csv', 'one file from three shards'),
          async (args) => {
            const { runResultsMerge } = await import('./commands/results.js');
            exitCode = await runResultsMerge({ files: args.files, out: args.out, json: args.json }, io);
          },
        )
        .demandCommand(1, 'name a results command: merge'),
    )
    .command(
      'keygen',
      'write an RSA-4096 key pair (PEM) to register with the service',
      (y) =>
        y
          .option('out', {
            type: 'string',
            demandOption: true,
            describe: 'directory for private.pem and public.pem',
          })
          .example('$0 keygen --out ~/.ccs', 'a new pair; give public.pem to the service')
          .example('$0 keygen --out ./rehearsal-keys', 'a throw-away pair for a rehearsal'),
      async (args) => {
        const { runKeygen } = await import('./commands/keygen.js');
        await runKeygen({ out: args.out }, io);
      },
    )
    .completion('completion', 'print a bash or zsh completion script (chosen by $SHELL)')
    .example('$0 validate clients.csv', 'check a file, send nothing')
    .example('$0 import clients.csv --failed fix-me.csv', 'import it (CCS_BASE_URL, CCS_TOKEN, CCS_SIGNING_KEY_FILE)')
    .example('$0 completion >> ~/.bashrc', 'tab completion of commands and flags (~/.zshrc for zsh)')
    .demandCommand(1, 'name a command: import, validate, export, check, sandbox, results, keygen or completion')
    .strict()
    .recommendCommands()
    .help()
    .version()
    .wrap(Math.min(110, io.stdout.columns ?? 110))
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message ?? 'invalid command line', 'usage');
    })
    .parseAsync();
  return exitCode;
}
