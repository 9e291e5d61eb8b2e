/**
 * What main says for a run that ends without its own summary: a thrown error (with --json, one
 * JSON object too) or a second Ctrl-C (the counts so far and the way back, printed before it
 * exits). The command fills it in as it learns it; main reads it. One run per process.
 */

/** The run in progress, as far as the command has told. */
export interface RunReport {
  /** `import`, `validate`, `export`… */
  command: string;
  /** Where --json puts a failure's object: stdout, or stderr when the data itself goes to stdout; undefined without --json. */
  json: 'stdout' | 'stderr' | undefined;
  /** The command that continues the run, once there is something to continue (the plan is settled). */
  resumeCommand?: string | undefined;
  /** The command that runs it again as it was asked (an export of a config report names the report). */
  nextCommand?: string | undefined;
  /** The lines a second Ctrl-C prints before the process exits: the counts so far and the resume command. */
  stopNow?: (() => string) | undefined;
}

let current: RunReport | undefined;

/**
 * Makes `report` the run main speaks for. It stays after the command returns or throws: main
 * reads it then (a process runs one command; a later one replaces it).
 */
export function reportRunAs(report: RunReport): void {
  current = report;
}

export function currentRun(): RunReport | undefined {
  return current;
}

/** A failed run, as --json prints it: one object, the same keys for every command (docs: the JSON failure object). */
export interface FailureFacts {
  command: string;
  exitCode: number;
  /** An error code of docs/errors.md, or `rows_failed` (the run finished; rows are invalid or failed). */
  code: string;
  message: string;
  /** Import: rows by outcome. */
  counts?: Readonly<Record<string, number>> | undefined;
  /** Import: rows read; export: clients written before it stopped. */
  rows?: number | undefined;
  resumeCommand?: string | undefined;
  nextCommand?: string | undefined;
}

/** The failure object's one line. */
export function failureJson(facts: FailureFacts): string {
  return `${JSON.stringify({ ok: false, ...facts })}\n`;
}

/** --json on the command line (a config file's `json` is known once the command resolved it: reportRunAs). */
export function wantsJson(argv: readonly string[]): boolean {
  let json = false;
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg === '--json' || arg === '--json=true') json = true;
    else if (arg === '--no-json' || arg === '--json=false') json = false;
  }
  return json;
}

/** The command's name as typed: the first word that is not a flag (`results merge` as `results`). */
export function commandOf(argv: readonly string[]): string {
  return argv.find((arg) => !arg.startsWith('-')) ?? '';
}
