/**
 * `ccs-bulk verify SOURCE…`: the command's yargs definition, its flags and its handler, shaped
 * like cli.ts's commands (registered there beside them). The connection flags are export's,
 * the input flags import's own (the same names and meanings); the settings are layered as import's
 * (flags > env > config file's import section > defaults), so a config file's `map` or
 * `dateFormat` reads the sources as the import read them.
 */
import type { Argv } from 'yargs';
import { connectionFlags, inputFlags } from './cli-flags.js';
import { EXPORT_DEFAULTS } from '../export/defaults.js';
import type { Io } from '../infra/io.js';
import type { VerifyFlags } from '../verify/options.js';
import type { CommandFlags } from './usage.js';

/** cli.ts's parse state, as much of it as a command touches. */
export interface CommandRun {
  argv: string[];
  env: NodeJS.ProcessEnv;
  io: Io;
  exitCode: number;
  parsing: CommandFlags | undefined;
}

const INPUT = 'Input:';
const OUTPUT = 'Output:';
const LISTING = 'Listing:';

/** @internal yargs types stay out of the published declarations. */
export function verifyFlags<T>(y: Argv<T>) {
  const sources = y.positional('sources', { type: 'string', array: true, demandOption: true, describe: 'the files the import read (CSV, .xlsx, .ods, .xls)' });
  return inputFlags(connectionFlags(sources))
    .option('results', {
      type: 'string',
      array: true,
      requiresArg: true,
      group: INPUT,
      describe: "the import's results files (default: each source's <source>.results.csv and its shards' .shard-K-of-N files)",
    })
    .option('created-from', { type: 'string', group: LISTING, describe: 'list only clients created from this ISO date or date-time, inclusive' })
    .option('created-to', { type: 'string', group: LISTING, describe: "… up to this one, inclusive (a date means the whole day; default: verify's start)" })
    .option('page-size', { type: 'number', group: LISTING, defaultDescription: String(EXPORT_DEFAULTS.pageSize), describe: 'clients per page' })
    .option('evidence', {
      type: 'string',
      requiresArg: true,
      group: OUTPUT,
      describe: 'write the evidence JSON here, a readable .html summary beside it, and its SHA-256 to <file>.sha256',
    })
    .option('overwrite', { type: 'boolean', group: OUTPUT, describe: 'replace existing evidence files (refused otherwise)' });
}

/** The settings verify reads: --print-config shows these. */
const USED = new Set([
  ...['baseUrl', 'tokenFile', 'token', 'tokenEnv', 'sandbox', 'proxy', 'caFile', 'clientCert', 'clientKey', 'timeout', 'retries', 'outageTimeout'],
  ...['map', 'ignoreColumn', 'dateFormat', 'encoding', 'delimiter', 'sheet', 'headerRow', 'maxRecordSize', 'identity', 'progressInterval', 'quiet', 'json'],
]);

/** @internal yargs types stay out of the published declarations. */
export function verifyCommand<T>(y: Argv<T>, run: CommandRun) {
  return y.command(
    'verify <sources..>',
    "prove a migration complete: every source row on the service once with its values, or accounted for in the results; no other client",
    (c) =>
      tracked(run, verifyFlags(c)
        .example('$0 verify clients.csv --evidence audit.json', 'every row checked; audit.json, audit.html and audit.json.sha256 for the file')
        .example('$0 verify jan.csv feb.xlsx --created-from 2025-01-01 --json', 'two sources against the clients created since January, as JSON')
        .example("$0 verify people.csv --map 'name=Legal name' --date-format DD/MM/YYYY", 'read the source with the flags the import had')),
    async (args) => {
      const { layerConfig, formatResolved } = await import('../config/config.js');
      const layers = await layerConfig<VerifyFlags>(args, run.env, 'import');
      if (args.printConfig === true) {
        const resolved = Object.fromEntries(Object.entries(layers.resolved).filter(([key]) => USED.has(key)));
        run.io.stdout.write(formatResolved({ ...layers, resolved }));
        return;
      }
      const { resolveVerifyOptions } = await import('../verify/options.js');
      const { runVerify } = await import('../commands/verify.js');
      run.exitCode = await runVerify(await resolveVerifyOptions(layers.flags, run.env, ['ccs-bulk', ...run.argv]), run.io);
    },
  );
}

/** Records the command's flags (kebab-case), for cli.ts's did-you-mean on a usage failure. */
function tracked<T>(run: CommandRun, y: Argv<T>): Argv<T> {
  const options = (y as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions();
  run.parsing = { command: 'verify', flags: Object.keys(options.key).filter((flag) => !/[A-Z]/.test(flag)) };
  return y;
}
