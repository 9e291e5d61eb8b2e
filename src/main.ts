/**
 * The one place that ends the process: maps the error family to exit codes and
 * prints expected failures as one clear line, never a stack trace.
 */
import { setMaxListeners } from 'node:events';
import { runCli } from './cli/cli.js';
import { isCcsError, StoppedError } from './errors.js';
import { redactSecrets } from './infra/redact.js';
import { resumeCommand } from './cli/resume-command.js';
import { commandOf, currentRun, failureJson, wantsJson } from './cli/run-report.js';

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
    // Second Ctrl-C: leave now, the way back said first. Results lines are single synchronous
    // writes, so none is torn.
    process.stderr.write(`\nccs-bulk: stopped at once (second ${signal === 'SIGTERM' ? 'SIGTERM' : 'interrupt'})\n${stopNowWords(argv)}`);
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
    sayFailure(argv, error, code);
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
  // Said by sayFailure once the command has named it.
  if (commandOf(argv) === 'import' && currentRun()?.resumeCommand === undefined) process.stderr.write(`  to continue: ${resumeCommand(argv)}\n`);
  sayFailure(argv, error, error.exitCode);
  process.exit(error.exitCode);
}

/**
 * After a thrown error's line: the way back once the run had started (the plan settled), and with
 * --json the failure as one object, so a pipeline parsing stdout never reads an empty document.
 */
function sayFailure(argv: readonly string[], error: unknown, exitCode: number): void {
  const run = currentRun();
  if (run?.resumeCommand !== undefined) process.stderr.write(`  to continue: ${run.resumeCommand}\n`);
  else if (run?.nextCommand !== undefined) process.stderr.write(`  to run it again: ${run.nextCommand}\n`);
  const json = run !== undefined ? run.json : wantsJson(argv) ? 'stdout' : undefined;
  if (json === undefined) return;
  const summary = (error as { summary?: { rows?: unknown; counts?: unknown } } | undefined)?.summary;
  const facts = {
    command: run?.command ?? commandOf(argv),
    exitCode,
    code: isCcsError(error) ? error.code : 'internal',
    message: redactSecrets(isCcsError(error) ? error.message : `internal error (please report): ${String((error as Error)?.message ?? error)}`),
    rows: typeof summary?.rows === 'number' ? summary.rows : undefined,
    resumeCommand: run?.resumeCommand,
    nextCommand: run?.nextCommand,
  };
  process[json].write(failureJson(facts));
}

/** A second Ctrl-C's words: the run's counts so far and its resume command, or the command as typed. */
function stopNowWords(argv: readonly string[]): string {
  const run = currentRun();
  try {
    const words = run?.stopNow?.();
    if (words !== undefined) return words;
  } catch {
    // The way back below is said whatever the counts could not say.
  }
  if (run?.resumeCommand !== undefined) return `  to continue: ${run.resumeCommand}\n`;
  return commandOf(argv) === 'import' ? `  to continue: ${resumeCommand(argv)}\n` : '';
}

function drain(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) resolve();
    else stream.once('drain', () => resolve());
  });
}
