/**
 * `ccs-bulk status`'s yargs definition, added to the command list by cli.ts like the others;
 * its code (commands/status.ts) is imported only when it runs.
 */
import type { Argv } from 'yargs';
import type { Io } from '../infra/io.js';
import type { CommandFlags } from './usage.js';

/** What the command reads and sets of cli.ts's parse (its Run). */
export interface StatusRun {
  io: Io;
  exitCode: number;
  parsing: CommandFlags | undefined;
}

/** @internal yargs types stay out of the published declarations. */
export function statusCommand<T>(y: Argv<T>, run: StatusRun): Argv<T> {
  return y.command(
    'status [paths..]',
    'where each migration in a folder stands (its results files): state, rows, the command to run next',
    (c) => {
      // For did-you-mean on a mistyped flag (usage.ts).
      run.parsing = { command: 'status', flags: ['json'] };
      return c
        .positional('paths', { type: 'string', array: true, describe: 'folders or files (default: the current folder)' })
        .option('json', { type: 'boolean', default: false, describe: 'print an array of objects on stdout, for scripts' })
        .example('$0 status', 'every results file in this folder: finished, stopped (why), killed or in progress')
        .example('$0 status clients.csv --json', "that input's results files, as JSON");
    },
    async (args) => {
      const { runStatus } = await import('../commands/status.js');
      run.exitCode = await runStatus({ paths: args.paths ?? [], json: args.json }, run.io);
    },
  );
}
