/**
 * yargs definitions only. Each command's code is imported lazily so `ccs-bulk --help`
 * loads nothing heavy; options are resolved once, in options.ts.
 */
import yargs, { type Argv } from 'yargs';
import { UsageError } from './errors.js';
import type { Io } from './io.js';

const CONNECTION = 'Connection:';
const INPUT = 'Input:';
const OUTPUT = 'Output:';
const SENDING = 'Sending:';

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
      default: 30,
      describe: 'seconds to wait for a response',
    })
    .option('retries', { type: 'number', group: CONNECTION, default: 5, describe: 'retries per request' })
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
      default: 600,
      describe: 'seconds the service may stay down mid-run (the run pauses) before it stops, resumable',
    })
    .option('quiet', { type: 'boolean', alias: 'q', describe: 'no progress on stderr' })
    .option('progress-interval', {
      type: 'number',
      default: 5,
      describe: 'seconds between plain progress lines when stderr is not a terminal',
    })
    .option('json', {
      type: 'boolean',
      describe: 'print the summary as JSON on stdout (stderr when data goes there)',
    });
}

function signingFlags<T>(y: Argv<T>) {
  return y
    .option('signing-key', {
      type: 'string',
      group: CONNECTION,
      describe: 'RSA-4096 private key PEM file (env CCS_SIGNING_KEY_FILE)',
    })
    .option('signature-hash', {
      choices: ['sha256', 'sha512'] as const,
      default: 'sha256' as const,
      group: CONNECTION,
    })
    .option('signature-padding', {
      choices: ['pkcs1', 'pss'] as const,
      default: 'pkcs1' as const,
      group: CONNECTION,
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
    .option('map', {
      type: 'string',
      array: true,
      group: INPUT,
      describe: 'field=Header for a column the matcher does not find (repeatable)',
    })
    .option('date-format', {
      choices: ['YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY'] as const,
      default: 'YYYY-MM-DD' as const,
      group: INPUT,
    })
    .option('encoding', { type: 'string', group: INPUT, describe: 'input encoding (detected when absent)' })
    .option('delimiter', { type: 'string', group: INPUT, describe: 'field delimiter (detected when absent)' })
    .option('sheet', { type: 'string', group: INPUT, describe: '.xlsx sheet name or 1-based number' })
    .option('max-record-size', {
      type: 'number',
      group: INPUT,
      describe: 'bytes allowed in one record (default 1 MiB)',
    })
    .option('application-date-field', { type: 'string', default: 'application_date', group: SENDING })
    .option('liquidity-type', {
      type: 'string',
      default: 'chain',
      group: SENDING,
      describe: 'liquidity_type for rows without that column',
    })
    .option('concurrency', { type: 'number', default: 8, group: SENDING, describe: 'requests in flight' })
    .option('rate', { type: 'number', group: SENDING, describe: 'at most N requests per second' })
    .option('max-errors', { type: 'number', group: SENDING, describe: 'stop (exit 3) after N failed rows' });
}

function exportFlags<T>(y: Argv<T>) {
  return connectionFlags(y)
    .option('out', {
      type: 'string',
      default: '-',
      requiresArg: true,
      group: OUTPUT,
      describe: "output file, '-' for stdout",
    })
    .option('format', { choices: ['csv', 'jsonl'] as const, default: 'csv' as const, group: OUTPUT })
    .option('columns', { type: 'string', group: OUTPUT, describe: 'comma list of columns, in order' })
    .option('bom', { type: 'boolean', group: OUTPUT, describe: 'start the CSV with a UTF-8 BOM (Excel)' })
    .option('escape-formulas', {
      type: 'boolean',
      default: true,
      group: OUTPUT,
      describe: "prefix cells starting with = + - @ tab CR with ' (--no-escape-formulas to turn off)",
    })
    .option('status', { type: 'string', describe: 'comma list of client statuses' })
    .option('credit-status', { type: 'string', describe: 'comma list: active,inactive' })
    .option('created-from', { type: 'string', describe: 'ISO date or date-time, inclusive' })
    .option('created-to', {
      type: 'string',
      describe: 'ISO date or date-time, inclusive (a date means the whole day)',
    })
    .option('direction', { choices: ['asc', 'desc'] as const, default: 'asc' as const })
    .option('page-size', { type: 'number', default: 100 })
    .option('prefetch', { type: 'number', default: 4, describe: 'pages fetched ahead of the writer' });
}

export type ImportArgv = Awaited<ReturnType<typeof importFlags>['argv']> & { dryRun?: boolean | undefined };
export type ExportArgv = Awaited<ReturnType<typeof exportFlags>['argv']>;

function checkFlags<T>(y: Argv<T>) {
  return signingFlags(connectionFlags(y)).option('detect-signature', {
    type: 'boolean',
    group: CONNECTION,
    describe: 'try sha256/sha512 × pkcs1/pss and report which the service accepts',
  });
}
export type CheckArgv = Awaited<ReturnType<typeof checkFlags>['argv']>;

/** Parses argv and runs the command; resolves to the command's exit code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let exitCode = 0;
  const importOrValidate = async (args: ImportArgv, dryRun: boolean) => {
    const { resolveImportOptions } = await import('./options.js');
    const { runImport } = await import('./commands/import.js');
    return runImport(await resolveImportOptions(args, env, { dryRun, commandLine: argv }), io);
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
        importFlags(y).option('dry-run', { type: 'boolean', describe: 'check everything, send nothing' }),
      async (args) => {
        exitCode = await importOrValidate(args, args.dryRun === true);
      },
    )
    .command(
      'validate <file>',
      'read and check a file like import, send nothing (= import --dry-run)',
      (y) => importFlags(y),
      async (args) => {
        exitCode = await importOrValidate(args, true);
      },
    )
    .command(
      'export',
      'List Clients (filtered, all pages) → CSV or JSONL',
      (y) => exportFlags(y),
      async (args) => {
        const { resolveExportOptions } = await import('./options.js');
        const { runExport } = await import('./commands/export.js');
        exitCode = await runExport(await resolveExportOptions(args, env), io);
      },
    )
    .command(
      'sandbox',
      'run a local emulator of the service, for rehearsals and tests',
      (y) =>
        y
          .option('port', { type: 'number', default: 4010 })
          .option('host', { type: 'string', default: '127.0.0.1' })
          .option('token', {
            type: 'string',
            describe: 'bearer token to accept (default: a fresh lk_sandbox_ token)',
          })
          .option('public-key', { type: 'string', describe: 'SPKI PEM file to verify signatures with' })
          .option('seed', { type: 'number', describe: 'create N varied clients at start' })
          .option('seed-random', { type: 'number', describe: 'PRNG seed for seeding and faults' })
          .option('page-base', { choices: [0, 1] as const, default: 0 as const })
          .option('max-page-size', { type: 'number' })
          .option('latency', { type: 'number', describe: 'ms added to every request' })
          .option('jitter', { type: 'number', describe: 'ms of random extra latency' })
          .option('fail-rate', { type: 'number', describe: 'probability of a 5xx' })
          .option('throttle-rate', { type: 'number', describe: 'probability of a 429 with Retry-After' })
          .option('rate-limit', { type: 'number', describe: 'requests per second before 429' })
          .option('drop-rate', {
            type: 'number',
            describe: 'probability a connection is cut before handling',
          })
          .option('reset-rate', {
            type: 'number',
            describe: 'probability a connection is cut after the client was created',
          })
          .option('retry-after', { type: 'number', describe: 'seconds sent in Retry-After (default 1)' })
          .option('auth-fail-after', { type: 'number', describe: 'answer 401 once N clients were created' })
          .option('application-date-field', { type: 'string', describe: 'wire name of the application date' })
          .option('verbose', { type: 'boolean', describe: 'one line per request on stderr' })
          .option('tls', { type: 'boolean', describe: 'serve HTTPS with a CA made for the run (prints NODE_EXTRA_CA_CERTS)' })
          .option('tls-client-cert', { type: 'boolean', describe: 'with --tls: require a client certificate (one is issued)' })
          .option('tls-client-ca', { type: 'string', describe: 'with --tls: also accept client certificates from this CA (PEM)' })
          .option('outage', { type: 'string', describe: 'AT:FOR seconds from the first request (add :drop to cut connections instead of 503)' })
          .option('verify-signatures', { type: 'boolean', default: true })
          .option('signature-hash', { choices: ['sha256', 'sha512'] as const, default: 'sha256' as const })
          .option('signature-padding', { choices: ['pkcs1', 'pss'] as const, default: 'pkcs1' as const }),
      async (args) => {
        const { runSandbox } = await import('./commands/sandbox.js');
        await runSandbox(
          {
            port: args.port,
            host: args.host,
            ...(args.token !== undefined && { token: args.token }),
            ...(args.publicKey !== undefined && { publicKeyFile: args.publicKey }),
            ...(args.seed !== undefined && { seed: args.seed }),
            ...(args.seedRandom !== undefined && { seedRandom: args.seedRandom }),
            pageBase: args.pageBase,
            ...(args.maxPageSize !== undefined && { maxPageSize: args.maxPageSize }),
            ...(args.latency !== undefined && { latency: args.latency }),
            ...(args.jitter !== undefined && { jitter: args.jitter }),
            ...(args.failRate !== undefined && { failRate: args.failRate }),
            ...(args.throttleRate !== undefined && { throttleRate: args.throttleRate }),
            ...(args.rateLimit !== undefined && { rateLimit: args.rateLimit }),
            ...(args.dropRate !== undefined && { dropRate: args.dropRate }),
            ...(args.resetRate !== undefined && { resetRate: args.resetRate }),
            // yargs' inferred types give up on a chain this long; these four are read by type.
            ...(typeof args.retryAfter === 'number' && { retryAfter: args.retryAfter }),
            ...(typeof args.authFailAfter === 'number' && { authFailAfter: args.authFailAfter }),
            ...(typeof args.applicationDateField === 'string' && {
              applicationDateField: args.applicationDateField,
            }),
            ...(args.verbose === true && { verbose: true }),
            ...(args.tls === true && { tls: true }),
            ...(args.tlsClientCert === true && { tlsClientCert: true }),
            ...(typeof args.tlsClientCa === 'string' && { tlsClientCa: args.tlsClientCa }),
            ...(typeof args.outage === 'string' && { outage: args.outage }),
            verifySignatures: args.verifySignatures,
            signatureHash: args.signatureHash,
            signaturePadding: args.signaturePadding,
          },
          io,
        );
      },
    )
    .command(
      'check',
      'preflight against the configured service: network, TLS, proxy, token, page base, clock, key, signature',
      (y) => checkFlags(y),
      async (args) => {
        const { resolveCheckOptions } = await import('./check/options.js');
        const { runCheck } = await import('./commands/check.js');
        exitCode = await runCheck(await resolveCheckOptions(args, env), io);
      },
    )
    .command(
      'keygen',
      'write an RSA-4096 key pair (PEM) to register with the service',
      (y) =>
        y.option('out', {
          type: 'string',
          demandOption: true,
          describe: 'directory for private.pem and public.pem',
        }),
      async (args) => {
        const { runKeygen } = await import('./commands/keygen.js');
        await runKeygen({ out: args.out }, io);
      },
    )
    .demandCommand(1, 'name a command: import, validate, export, check, sandbox or keygen')
    .strict()
    .recommendCommands()
    .help()
    .version()
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message ?? 'invalid command line', 'usage');
    })
    .parseAsync();
  return exitCode;
}
