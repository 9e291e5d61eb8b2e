/**
 * yargs definitions only: the commands, their examples and handlers (flags: cli-flags.ts). Each
 * command's code is imported lazily so `ccs-bulk --help` loads nothing heavy; options are
 * resolved once, in options.ts.
 */
import yargs, { type Argv } from 'yargs';
import { checkFlags, checkServiceFlag, exportFlags, heldCacheFlag, importFlags, sandboxFlags } from './cli-flags.js';
import { UsageError } from '../errors.js';
import type { Io } from '../infra/io.js';
import type { CheckFlags, ExportFlags, ImportFlags } from '../config/options.js';
import { type CommandFlags, explainUsage } from './usage.js';
import { statusCommand } from './status-command.js';
import { verifyCommand } from './verify-command.js';

/** Drops the keys whose value is undefined: optional options stay absent, not undefined. */
function definedOnly<T extends object>(values: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as T;
}

type ImportArgv = Awaited<ReturnType<typeof importFlags>['argv']>;
type SandboxArgv = Awaited<ReturnType<typeof sandboxFlags>['argv']>;

/** What the config layer reads of any service command's arguments. */
interface RawArgv {
  config?: string | undefined;
  report?: string | undefined;
  printConfig?: boolean | undefined;
  sandbox?: boolean | undefined;
  tokenFile?: string | undefined;
}

/** One parse: its inputs, the exit code the command sets, and the command being parsed. */
interface Run {
  argv: string[];
  env: NodeJS.ProcessEnv;
  io: Io;
  exitCode: number;
  /** Set by each command's builder, so a usage failure can name the command's own flags. */
  parsing: CommandFlags | undefined;
}

/** Records the command's flags (kebab-case) as yargs sees them, for did-you-mean. */
function tracked<T>(run: Run, command: string, y: Argv<T>): Argv<T> {
  const options = (y as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions();
  const flags = Object.keys(options.key).filter((flag) => !/[A-Z]/.test(flag));
  run.parsing = { command, flags };
  return y;
}

/** flags > env > config file > defaults, once; `--print-config` prints them and stops here. */
async function layered<T>(run: Run, args: RawArgv, command: 'import' | 'export' | 'check'): Promise<T | undefined> {
  const { layerConfig, formatResolved, checkLayered } = await import('../config/config.js');
  const layers = await layerConfig<T>(args, run.env, command);
  if (args.printConfig !== true) return layers.flags;
  await checkLayered(command, layers.flags, run.env);
  run.io.stdout.write(formatResolved(layers));
  return undefined;
}

async function importOrValidate(run: Run, args: ImportArgv, dryRun: boolean): Promise<number> {
  const flags = await layered<ImportFlags>(run, args, 'import');
  if (flags === undefined) return 0;
  const { resolveImportOptions } = await import('../config/options.js');
  const { runImport } = await import('../commands/import.js');
  return runImport(await resolveImportOptions(flags, run.env, { dryRun, commandLine: run.argv }), run.io);
}

function importCommands<T>(y: Argv<T>, run: Run) {
  return y
    .command(
      'import <file>',
      'CSV or .xlsx → Create Client, with a results file',
      (c) =>
        tracked(run, 'import', heldCacheFlag(importFlags(c))
          .option('dry-run', { type: 'boolean', describe: 'check everything, send nothing' })
          .example('$0 import clients.csv --sandbox', 'rehearse against an in-process sandbox, no configuration')
          .example('$0 import clients.csv --failed fix-me.csv', 'send every row; the rows to fix go to fix-me.csv')
          .example('$0 import clients.csv --resume', 'continue after a crash, Ctrl-C or a stop')),
      async (args) => {
        run.exitCode = await importOrValidate(run, args, args.dryRun === true);
      },
    )
    .command(
      'validate <file>',
      'read and check a file like import, send nothing (= import --dry-run)',
      (c) =>
        tracked(run, 'validate', checkServiceFlag(importFlags(c))
          .example('$0 validate clients.csv', 'print the plan (encoding, delimiter, columns) and check every row')
          .example("$0 validate export.csv --delimiter ';' --encoding windows-1252", 'override what was detected')
          .example("$0 validate people.xlsx --sheet 2 --map 'name=Legal name'", 'a sheet, and a column not recognised')),
      async (args) => {
        run.exitCode = await importOrValidate(run, args, true);
      },
    );
}

function exportCommand<T>(y: Argv<T>, run: Run) {
  return y.command(
    'export',
    'List Clients (filtered, all pages) → CSV, JSONL or an xlsx report',
    (c) =>
      tracked(run, 'export', exportFlags(c)
        .example('$0 export --out clients.csv', 'every client, CSV, written atomically')
        .example('$0 export --status approved --out approved.xlsx', 'an xlsx report: bold frozen header, autofilter')
        .example(
          '$0 export --created-from 2025-01-01 --created-to 2025-01-31 --bom --out jan.csv',
          'all of January (UTC), for Excel',
        )),
    async (args) => {
      const flags = await layered<ExportFlags>(run, args, 'export');
      if (flags === undefined) return;
      const { resolveExportOptions } = await import('../config/options.js');
      const { runExport } = await import('../commands/export.js');
      run.exitCode = await runExport(await resolveExportOptions(flags, run.env), run.io);
    },
  );
}

/** Sandbox flag names → the library's option names, once. */
function sandboxOptions(args: SandboxArgv) {
  return definedOnly({
    port: args.port,
    host: args.host,
    basePath: args.basePath,
    token: args.token,
    publicKeyFile: args.publicKey,
    seed: args.seed,
    seedUntil: args.seedUntil,
    clock: args.clock,
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
    outageFromStart: args.outageFromStart,
    outageAfterCreates: args.outageAfterCreates,
    latencySchedule: args.latencySchedule,
    verifySignatures: args.verifySignatures,
    signature: { hash: args.signatureHash, padding: args.signaturePadding },
  });
}

function sandboxCommand<T>(y: Argv<T>, run: Run) {
  return y.command(
    'sandbox',
    'run a local emulator of the service, for rehearsals and tests',
    (c) =>
      tracked(run, 'sandbox', sandboxFlags(c)
        .example('$0 sandbox --seed 100', 'serve 100 varied clients on :4010; prints the export line to paste')
        .example('$0 sandbox --port 0 --latency 50 --fail-rate 0.05', 'a free port, a slow and flaky service')
        .example('$0 sandbox --reset-rate 0.05', 'cut 5% of connections after creating the client')),
    async (args) => {
      const { runSandbox } = await import('../commands/sandbox.js');
      await runSandbox(sandboxOptions(args), run.io);
    },
  );
}

function checkCommand<T>(y: Argv<T>, run: Run) {
  return y.command(
    'check',
    'preflight against the configured service: network, TLS, proxy, token, page base, clock, key, signature',
    (c) =>
      tracked(run, 'check', checkFlags(c)
        .example('$0 check', 'every line ok before a migration (CCS_BASE_URL, CCS_TOKEN, CCS_SIGNING_KEY_FILE)')
        .example('$0 check --detect-signature', 'find the signature scheme the service accepts')
        .example('$0 check --proxy http://proxy.corp:3128 --ca-file corp-ca.pem --json', 'behind a proxy and a company CA, for a script')),
    async (args) => {
      const flags = await layered<CheckFlags>(run, args, 'check');
      if (flags === undefined) return;
      const { resolveCheckOptions } = await import('../check/options.js');
      const { runCheck } = await import('../commands/check.js');
      run.exitCode = await runCheck(await resolveCheckOptions(flags, run.env), run.io);
    },
  );
}

function resultsCommand<T>(y: Argv<T>, run: Run) {
  return y.command('results', "work with results files: merge the shards' files (--shard) into one", (r) =>
    r
      .command(
        'merge <files..>',
        "combine the shards' results files into one, in row order, each row once; or several sources' into one report",
        (m) =>
          tracked(run, 'results merge', m
            .positional('files', { type: 'string', array: true, demandOption: true })
            .option('out', { type: 'string', demandOption: true, requiresArg: true, describe: 'the merged file (refused if it exists, unless --overwrite)' })
            .option('overwrite', { type: 'boolean', default: false, describe: 'replace an existing --out file (kept beside it as a dated .bak copy)' })
            .option('failed', { type: 'boolean', default: false, describe: "the files are the shards' --failed files: one file of every row to fix" })
            .option('json', { type: 'boolean', default: false, describe: 'print the summary as JSON on stdout' })
            .example('$0 results merge clients.results.shard-*-of-3.csv --out clients.results.csv', 'one file from three shards')
            .example('$0 results merge --failed fix-me.shard-*-of-3.csv --out fix-me.csv', 'the shards\' failed rows in one file')
            .example('$0 results merge clients.csv.results.csv fix-me.csv.results.csv --out migration.csv', 'one report of a migration\'s sources')),
        async (args) => {
          const { runResultsMerge } = await import('../commands/results.js');
          run.exitCode = await runResultsMerge({ files: args.files, out: args.out, json: args.json, overwrite: args.overwrite, failed: args.failed }, run.io);
        },
      )
      .demandCommand(1, 'name a results command: merge'),
  );
}

function keygenCommand<T>(y: Argv<T>, run: Run) {
  return y.command(
    'keygen',
    'write an RSA-4096 key pair (PEM) to register with the service',
    (c) =>
      tracked(run, 'keygen', c
        .option('out', {
          type: 'string',
          demandOption: true,
          describe: 'directory for private.pem and public.pem',
        })
        .example('$0 keygen --out ~/.ccs', 'a new pair; give public.pem to the service')
        .example('$0 keygen --out ./rehearsal-keys', 'a throw-away pair for a rehearsal')),
    async (args) => {
      const { runKeygen } = await import('../commands/keygen.js');
      await runKeygen({ out: args.out }, run.io);
    },
  );
}

/** Whether the command line may ask for help (`--help`, or `help` after a command): anything naming it counts. */
function mayShowHelp(argv: readonly string[]): boolean {
  return argv.some((arg) => arg.includes('help'));
}

/** Parses argv and runs the command; resolves to the command's exit code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const run: Run = { argv, env, io, exitCode: 0, parsing: undefined };
  let y = yargs(argv)
    .scriptName('ccs-bulk')
    .usage('$0 <command> [options]\n\nMove client profiles between spreadsheets and the Client Credit Service.');
  for (const add of [importCommands, exportCommand, sandboxCommand, checkCommand, resultsCommand, keygenCommand, statusCommand, verifyCommand]) {
    y = add(y, run);
  }
  await y
    .completion('completion', 'print a bash or zsh completion script (chosen by $SHELL)')
    .example('$0 validate clients.csv', 'check a file, send nothing')
    .example('$0 import clients.csv --failed fix-me.csv', 'import it (CCS_BASE_URL, CCS_TOKEN, CCS_SIGNING_KEY_FILE)')
    .example('$0 completion >> ~/.bashrc', 'tab completion of commands and flags (~/.zshrc for zsh)')
    .demandCommand(1, 'name a command: import, validate, export, check, status, verify, sandbox, results, keygen or completion')
    .strict()
    .recommendCommands()
    .help()
    .version()
    // yargs lays out the command's help after starting its handler even when none is printed;
    // unwrapped, that skips measuring and wrapping every line (tens of ms of start-up).
    .wrap(mayShowHelp(argv) ? Math.min(110, io.stdout.columns ?? 110) : null)
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(explainUsage(message ?? 'invalid command line', argv, run.parsing), 'usage');
    })
    .parseAsync();
  return run.exitCode;
}
