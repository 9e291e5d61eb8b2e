/**
 * The one place that ends the process: maps the error family to exit codes and
 * prints expected failures as one clear line, never a stack trace.
 */
import { setMaxListeners } from 'node:events';
import { runCli } from './cli/cli.js';
import { isCcsError, StoppedError } from './errors.js';
import { redactSecrets } from './infra/redact.js';
import { resumeCommand } from './cli/resume-command.js';

export { redactSecrets };

export async function main(argv: string[]): Promise<never> {
  const interrupt = new AbortController();
  // Every in-flight request listens for Ctrl-C: hundreds at high concurrency is expected.
  setMaxListeners(0, interrupt.signal);
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      interrupt.abort(new Error(signal));
      return;
    }
    // Second Ctrl-C: leave now. Results lines are single synchronous writes, so none is torn.
    process.stderr.write('\nccs-bulk: stopped at once (second interrupt)\n');
    process.exit(3);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // Until runCli settles a run is open: an event loop that empties before then means some
  // work waits on nothing (a bug), and exit 0 would claim rows that were never sent.
  let open = true;
  process.on('beforeExit', () => {
    if (open) stopUnfinished(argv);
  });

  let code: number;
  try {
    code = await runCli(argv, process.env, {
      stdout: process.stdout,
      stderr: process.stderr,
      signal: interrupt.signal,
    });
  } catch (error) {
    if (isCcsError(error)) {
      process.stderr.write(`ccs-bulk: error: ${redactSecrets(error.message)} [${error.code}]\n`);
      code = error.exitCode;
    } else {
      process.stderr.write(
        `ccs-bulk: internal error (please report): ${(error as Error)?.stack ?? String(error)}\n`,
      );
      code = 1;
    }
  }
  open = false;
  await drain(process.stdout);
  process.exit(code);
}

/** The run's event loop emptied with the run still open: never exit 0 for it. */
function stopUnfinished(argv: readonly string[]): never {
  const error = new StoppedError(
    'the run stopped unfinished: nothing was left running to finish it (a fault in ccs-bulk; please report it). ' +
      'Rows without an outcome in the results file were not sent',
    'incomplete_run',
  );
  process.stderr.write(`ccs-bulk: error: ${error.message} [${error.code}]\n`);
  if (argv.find((arg) => !arg.startsWith('-')) === 'import') process.stderr.write(`  to continue: ${resumeCommand(argv)}\n`);
  process.exit(error.exitCode);
}

function drain(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) resolve();
    else stream.once('drain', () => resolve());
  });
}
